// claims_gradients.cpp — the claims about gradients and activations at initialization and
// the depth they allow: 1 (no residual), 3 (Post-LN), 8 (1/√2 scaling). Each section gives the
// rule of its verdict.
#include "claims_writer.hpp"

#include <algorithm>
#include <cmath>

#include "common/study.hpp"

namespace depth_study {

void claim_1(Writer& w) {
  const Settings& s = w.s;
  w.section(1, "without residual connections the gradient fades and training fails beyond 4 layers",
            "Without residual connections, the gradient that reaches the first layers falls to about 5% of its value "
            "after 12 layers, and beyond 4 layers training becomes unstable.",
            "The *No residual* placement (h = N1(Attn(x)); y = N2(FFN(h)): the norms stay, the skips go) at initialization "
            "at depths " + depth_list(s.profile_depths) + ", beside Pre-LN; then trained in the grid.");
  auto ratio = [&](const std::string& p, std::int64_t d) { return w.ratio(p, d); };
  w.doc().table(profile_table(w, {"none", "pre", "post"}, ratio),
                "‖∇ block 1‖ / ‖∇ block L‖ at initialization (mean ± spread over the seeds)");
  study::LineChart grad = profile_chart(w, "Gradient of block 1 relative to block L, at initialization",
                                        "‖∇ block 1‖ / ‖∇ block L‖", {"none", "post", "pre", "b2t"}, ratio);
  grad.caption = "At 1 the first block gets as much gradient as the last; a line that falls as the depth grows is the "
                 "first blocks' gradient fading. The claim expects *No residual* to fall to about 0.05 by 12 layers. The "
                 "bars span the seeds.";
  w.chart(grad, "grad_ratio_at_init.svg");
  // (a) the gradient at depth 12
  if (!has(s.profile_placements, "none") || !has(s.profile_depths, 12)) {
    w.verdict(Verdict::not_measured, unreached("No residual at depth 12", "--profile-placements, --profile-depths"));
  } else {
    const Stat r12 = w.ratio("none", 12);
    const std::string fig = "at 12 layers ‖∇ block 1‖ / ‖∇ block 12‖ = " + fmt_stat(r12, 2) + " (the claim: about 0.05)";
    w.verdict(r12.mean < 0.2 ? Verdict::supported : Verdict::not_supported, fig + ".");
    ratio_by_init(w, "none", 12, [](double r) { return r < 0.2; }, "block 1's gradient falls below a fifth of block 12's");
  }
  // (b) training beyond 4 layers
  std::vector<std::string> rows;
  int shallow = -1, deep = -1;
  std::int64_t deep_at = 0;
  for (auto d : grid_depths(s)) {
    const int t = w.trains_at("none", d);
    if (t < 0) continue;
    rows.push_back("L=" + std::to_string(d) + ": " + w.grid_cell("none", d));
    if (d <= 4) shallow = std::max(shallow, t);
    else if (deep < 0 || (deep == 1 && t == 0)) deep = t, deep_at = d;
  }
  if (!rows.empty()) w.doc().bullets(rows);
  if (shallow < 0 || deep < 0)
    w.verdict(Verdict::not_measured, unreached("No residual trained at a depth ≤ 4 and one > 4", "--placements, --depths"));
  else if (shallow == 1 && deep == 0)
    w.verdict(Verdict::supported, "No residual trains at ≤ 4 layers and fails from " + std::to_string(deep_at) + " layers.");
  else if (shallow == 1)
    w.verdict(Verdict::not_supported, "No residual still trains beyond 4 layers here (see the grid).");
  else
    w.verdict(Verdict::not_supported, "No residual does not even train at ≤ 4 layers in this setup.");
}

void claim_3(Writer& w) {
  const Settings& s = w.s;
  w.section(3, "Post-LN's first layer loses its gradient beyond 12 layers",
            "Post-LN: beyond 12 layers the first layer's gradient collapses (0.0002 at layer 1 against 0.02 at layer 12); "
            "below 12 layers Post-LN is viable and performs well.",
            "Post-LN at initialization at depths " + depth_list(s.profile_depths) + "; trained in the grid; and at " +
                std::to_string(s.setup_depth) + " layers under every setup of the setups stage.");
  // (a) the gradient
  if (!has(s.profile_placements, "post")) {
    w.verdict(Verdict::not_measured, unreached("Post-LN at initialization", "--profile-placements"));
  } else {
    std::int64_t collapse_at = 0;
    for (auto d : s.profile_depths)
      if (!collapse_at && w.ratio("post", d).mean < 0.1) collapse_at = d;
    std::string figs;
    for (auto d : s.profile_depths) figs += (figs.empty() ? "" : ", ") + ("L=" + std::to_string(d) + ": " + fmt_stat(w.ratio("post", d), 2));
    if (collapse_at > 12)
      w.verdict(Verdict::supported, "block 1's gradient falls below a tenth of block L's from " + std::to_string(collapse_at) + " layers (" + figs + ").");
    else if (collapse_at > 0)
      w.verdict(Verdict::not_supported, "the gradient already falls below a tenth at " + std::to_string(collapse_at) + " layers (" + figs + ").");
    else
      w.verdict(Verdict::not_supported, "at initialization block 1 keeps more than a tenth of block L's gradient at every depth (" + figs + ").");
    const std::int64_t deep = s.profile_depths.back();
    ratio_by_init(w, "post", deep, [](double r) { return r < 0.1; }, "block 1's gradient is below a tenth of block L's");
  }
  // After training, at --skip-depth: the same ratio in the trained models.
  const auto ratio_after = [&](const std::string& p) {
    std::vector<double> v;
    for (auto* t : w.measured(p)) v.push_back(bottom_to_top_ratio(t->after));
    return stat_of(v);
  };
  if (ratio_after("post").n)
    w.doc().paragraph("After training, at " + std::to_string(s.skip_depth) + " layers, ‖∇ block 1‖ / ‖∇ block L‖ is " +
                      fmt_stat(ratio_after("post"), 2) + " in Post-LN and " + fmt_stat(ratio_after("pre"), 2) + " in Pre-LN.");
  // (b) trains below 12 layers: at every grid depth ≤ 12, most seeds train
  std::vector<std::string> rows;
  int ok = -1;
  for (auto d : grid_depths(s)) {
    const int t = w.trains_at("post", d);
    if (t < 0) continue;
    rows.push_back("L=" + std::to_string(d) + ": " + w.grid_cell("post", d) + "; Pre-LN " + w.grid_cell("pre", d));
    if (d <= 12) ok = ok < 0 ? t : std::min(ok, t);
  }
  if (!rows.empty()) w.doc().bullets(rows);
  if (ok < 0) w.verdict(Verdict::not_measured, unreached("Post-LN trained at ≤ 12 layers", "--placements, --depths"));
  else if (ok == 1) w.verdict(Verdict::supported, "Post-LN trains at every grid depth up to 12 in the default setup.");
  else w.verdict(Verdict::not_supported, "Post-LN fails at a grid depth of 12 or less in the default setup.");
  depends_on_setup(w, "post");
}

void claim_8(Writer& w) {
  const Settings& s = w.s;
  w.section(8, "1/√2 per residual connection avoids variance explosion",
            "Residual scaling by 1/√2 per connection avoids variance explosion in very deep networks.",
            "Pre-LN and Post-LN with and without α = 1/√2 on each connection (h = α(x + F(x))), at initialization at depths " +
                depth_list(s.profile_depths) + ": the RMS of the last block's output.");
  auto rms = [&](const std::string& p, std::int64_t d) { return w.last_rms(p, d); };
  const std::vector<std::string> ps = {"pre", "pre-scaled", "post", "post-scaled", "none"};
  w.doc().table(profile_table(w, ps, rms), "RMS of block L's output at initialization");
  study::LineChart rms_chart = profile_chart(w, "Activation RMS of the last block at initialization", "RMS(h_L) (log scale)", ps, rms);
  rms_chart.caption = "A line that climbs with the depth is the activations' variance growing block after block. The claim "
                      "expects Pre-LN to climb and Pre-LN with 1/√2 to stay flat; Post-LN's last norm holds its output near 1 "
                      "either way. The bars span the seeds.";
  w.chart(rms_chart, "rms_at_init.svg");
  if (!has(s.profile_placements, "pre") || !has(s.profile_placements, "pre-scaled") || s.profile_depths.size() < 2) {
    w.verdict(Verdict::not_measured, unreached("Pre-LN with and without 1/√2 at two depths or more", "--profile-placements"));
    return;
  }
  const auto lo = s.profile_depths.front(), hi = s.profile_depths.back();
  const double grow = w.last_rms("pre", hi).mean / w.last_rms("pre", lo).mean;
  const double grow_scaled = w.last_rms("pre-scaled", hi).mean / w.last_rms("pre-scaled", lo).mean;
  const std::string fig = "from " + std::to_string(lo) + " to " + std::to_string(hi) + " layers the RMS grows " + fmt(grow, 3) +
                          "× in Pre-LN and " + fmt(grow_scaled, 3) + "× with 1/√2";
  w.verdict(grow > 2 && grow_scaled < 2 ? Verdict::supported : Verdict::not_supported, fig + ".");
}


}  // namespace depth_study
