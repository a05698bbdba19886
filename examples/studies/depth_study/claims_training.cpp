// claims_training.cpp — the claims about what trains and how well: 2 (100 layers), 4 (Pre-LN
// at 48+), 5 (layer similarity and effective depth), 6 (learning rates), 10 (ε, not measurable
// here). Each section gives its rule. Claims 7 and 9 (the newer placements) are in
// claims_variants.cpp.
#include "claims_writer.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <tuple>

#include "common/study.hpp"

namespace depth_study {

void claim_2(Writer& w) {
  const Settings& s = w.s;
  const std::int64_t deep = grid_depths(s).back();
  w.section(2, "100 layers need residual connections and normalization",
            "A 100-layer model cannot be trained without residual connections and normalization.",
            "No residual (norms kept: it tests the residual half of the claim; a stack with neither trains no better) at "
            "the grid's depths, and Pre-LN at the deepest, " + std::to_string(deep) + " blocks.");
  if (deep < 96) {
    w.verdict(Verdict::not_measured, "the deepest grid depth is " + std::to_string(deep) + " (--deep-depths 128 or --full reaches 100 layers)");
    return;
  }
  // No residual at the deepest depth it ran: a stack without residuals that fails there and
  // at every smaller depth fails deeper still (depth only lengthens the product of Jacobians),
  // so a run at 100 blocks is needed only when it still trains at its deepest.
  std::int64_t none_depth = 0;
  bool none_trains_anywhere = false;
  for (auto d : grid_depths(s))
    if (const int t = w.trains_at("none", d); t >= 0) none_depth = d, none_trains_anywhere |= t == 1;
  const int none = none_depth > 0 ? w.trains_at("none", none_depth) : -1, pre = w.trains_at("pre", deep);
  w.doc().bullets({"No residual, L=" + std::to_string(none_depth) + ": " + (none_depth > 0 ? w.grid_cell("none", none_depth) : "not run"),
                   "Pre-LN, L=" + std::to_string(deep) + ": " + w.grid_cell("pre", deep),
                   "LLaMA, L=" + std::to_string(deep) + ": " + w.grid_cell("llama", deep)});
  if (none < 0 || pre < 0)
    w.verdict(Verdict::not_measured, unreached("No residual and Pre-LN at " + std::to_string(deep), "--deep-placements"));
  else if (none == 1 && none_depth < 96)
    w.verdict(Verdict::not_measured, "No residual still trains at " + std::to_string(none_depth) +
                                         " layers, its deepest run: --deep-placements none takes it to " + std::to_string(deep));
  else if (!none_trains_anywhere && pre == 1)
    w.verdict(Verdict::supported, "No residual trains at no depth it ran, up to " + std::to_string(none_depth) +
                                      " layers (so not at 100: depth only makes it harder); Pre-LN (residual and norm) trains at " +
                                      std::to_string(deep) + ".");
  else if (none == 0 && pre == 1)
    w.verdict(Verdict::supported, "at " + std::to_string(none_depth) + " layers No residual does not train; Pre-LN trains at " +
                                      std::to_string(deep) + ".");
  else if (none == 1)
    w.verdict(Verdict::not_supported, "No residual trains at " + std::to_string(none_depth) + " layers here.");
  else
    w.verdict(Verdict::depends, "neither No residual nor Pre-LN trains at " + std::to_string(deep) +
                                    " layers in this budget of steps: the depth fails, not the lack of residuals alone.");
}

// Outcome of a placement at a depth under each setup of the setups stage: "tied:gpt2:15 0/3".
void claim_4(Writer& w) {
  const Settings& s = w.s;
  w.section(4, "Pre-LN trains at 48 layers and more", "Pre-LN trains stably at 48 layers and more.",
            "Pre-LN trained in the grid at every depth up to " + std::to_string(grid_depths(s).back()) + ".");
  std::vector<std::string> rows;
  int deep_ok = -1;
  for (auto d : grid_depths(s)) {
    const int t = w.trains_at("pre", d);
    if (t < 0) continue;
    rows.push_back("L=" + std::to_string(d) + ": " + w.grid_cell("pre", d));
    if (d >= 48) deep_ok = deep_ok < 0 ? t : std::min(deep_ok, t);
  }
  w.doc().bullets(rows);
  if (deep_ok < 0) w.verdict(Verdict::not_measured, unreached("Pre-LN at 48 layers or more", "--depths"));
  else if (deep_ok == 1) w.verdict(Verdict::supported, "Pre-LN trains at every grid depth of 48 and more (above).");
  else w.verdict(Verdict::not_supported, "Pre-LN fails at a grid depth of 48 or more (above).");
}

void claim_5(Writer& w) {
  const Settings& s = w.s;
  w.section(5, "Pre-LN's consecutive layers are alike, cutting its effective depth",
            "Pre-LN makes consecutive layers more similar (cosine 0.87 against 0.63 for Post-LN): \"layer collapse\", "
            "where several layers learn nearly the same thing, cutting the effective depth by up to 40%.",
            "The grid's trained runs at " + std::to_string(s.skip_depth) + " layers (best lr): the mean over layers of "
            "cos(h_l, h_{l-1}) on the probe batch, and the validation loss with each block skipped (its output replaced by "
            "its input). A block is droppable when skipping it raises the loss by less than " + fmt(100 * s.skip_threshold) +
            "%; the effective depth is L × (1 − droppable share).");
  study::Table t({"placement", "runs", "mean cosine of consecutive layers", "droppable share", "effective depth"});
  for (const auto& p : s.placements) {
    const auto m = w.measured(p);
    if (m.empty()) continue;
    const Stat drop = w.of_measured(p, [&](const TrainedRecord& x) { return droppable_share(x, s.skip_threshold); });
    t.add({label(p), std::to_string(m.size()), fmt_stat(w.of_measured(p, [](const TrainedRecord& x) { return mean_cosine(x.after); })),
           fmt_stat(drop), fmt_stat({static_cast<double>(s.skip_depth) * (1 - drop.mean), static_cast<double>(s.skip_depth) * drop.sd, drop.n})});
  }
  w.doc().table(t, "After training, " + std::to_string(s.skip_depth) + " layers; mean ± spread over the seeds that did not diverge");
  // The skip chart: loss rise per skipped block for Pre-LN and Post-LN (and the others measured).
  study::LineChart c("Validation loss rise when one block is skipped", "skipped block", "relative loss rise (log scale)");
  c.log_y = true;
  c.integer_x = true;
  for (const auto& p : s.placements) {
    const auto m = w.measured(p);
    if (m.empty()) continue;
    study::Series se;
    se.name = label(p);
    se.markers = true;
    for (std::int64_t l = 0; l < s.skip_depth; ++l) {
      std::vector<double> rise;
      for (auto* x : m) rise.push_back(x->skip_losses[l] / x->train.val_loss - 1);
      const Stat st = stat_of(rise);
      se.x.push_back(static_cast<double>(l + 1));
      se.y.push_back(st.mean);
    }
    c.series.push_back(se);
  }
  c.caption = "The lower a block's point, the less the model needs it: skipping it raises the validation loss by little, "
              "and under " + fmt(100 * s.skip_threshold) + "% it counts as droppable. The claim expects Pre-LN's points below "
              "Post-LN's. A block whose skipping does not raise the loss at all has no point (log scale); mean over the seeds.";
  if (!c.series.empty()) w.chart(c, "skip_block_loss_rise.svg");
  const auto pre = w.measured("pre"), post = w.measured("post");
  if (pre.empty() || post.empty()) {
    w.verdict(Verdict::not_measured, "Pre-LN and Post-LN did not both train at --skip-depth " + std::to_string(s.skip_depth));
    return;
  }
  // Both verdicts rest on the paired t-interval of Pre-LN − Post-LN over the seeds where both
  // trained (seed s draws the same embeddings and batches in both, so the pair shares them).
  // Equivalence bands: ±0.05 cosine (a fifth of the claimed 0.24 gap) and ±0.1 droppable share
  // (a quarter of the claimed 0.4).
  const auto cosine = [](const TrainedRecord& x) { return mean_cosine(x.after); };
  const auto drop = [&](const TrainedRecord& x) { return droppable_share(x, s.skip_threshold); };
  w.doc().paragraph("Pre-LN and Post-LN mean cosine " + fmt_stat(w.of_measured("pre", cosine)) + " and " +
                    fmt_stat(w.of_measured("post", cosine)) + " (the claim: 0.87 against 0.63); droppable share " +
                    fmt_stat(w.of_measured("pre", drop)) + " and " + fmt_stat(w.of_measured("post", drop)) +
                    " (the claim: up to 0.4). The verdicts take the 95% paired t-interval of the per-seed difference "
                    "Pre-LN − Post-LN: supported when it lies above 0, not supported below 0 or inside the equivalence "
                    "band (±0.05 cosine, ±0.1 share), inconclusive otherwise.");
  interval_verdict(w, "Pre-LN − Post-LN mean cosine of consecutive layers",
                   paired_t_interval(w.by_seed(pre, cosine), w.by_seed(post, cosine)), 0, 0.05, "±0.05");
  interval_verdict(w, "Pre-LN − Post-LN droppable share", paired_t_interval(w.by_seed(pre, drop), w.by_seed(post, drop)), 0,
                   0.1, "±0.1");
}

void claim_6(Writer& w) {
  const Settings& s = w.s;
  w.section(6, "Pre-LN needs a 20–30% higher learning rate than Post-LN",
            "Pre-LN needs a learning rate 20–30% higher than Post-LN.",
            "The lr stage: " + study::join(s.lr_placements) + " at " + std::to_string(s.lr_depth) + " layers, trained at each "
            "learning rate of " + study::comma_list(s.lr_sweep) + " and every seed. A seed's best learning rate is the vertex of "
            "a parabola through the lowest validation loss and its two neighbours in log(lr).");
  study::LineChart c("Validation loss by learning rate, " + std::to_string(s.lr_depth) + " layers", "learning rate (log scale)",
                     "validation loss (nats/token)");
  c.log_x = true;
  study::Table t({"placement", "best lr per seed", "best lr (mean ± spread)"});
  std::map<std::string, std::vector<int>> edges;  // placement -> best_lr_edge per seed, for the table and the verdict
  for (const auto& p : s.lr_placements) {
    study::Series se;
    se.name = label(p);
    se.markers = true;
    for (double lr : s.lr_sweep) {
      add_point(se, lr, val_stat(runs_of(w.r, "lr", p, s.lr_depth, lr, s.setup)));
    }
    c.series.push_back(se);
    std::vector<double> best;
    std::vector<std::string> text;
    for (auto seed : s.seeds) {
      best.push_back(best_lr(w.r, s, p, seed));
      const int edge = edges[p].emplace_back(best_lr_edge(w.r, s, p, seed));  // at an end of the sweep: a bound
      text.push_back((edge > 0 ? "≥ " : edge < 0 ? "≤ " : "") + fmt(best.back(), 3));
    }
    t.add({label(p), study::join(text), fmt_stat(stat_of(best))});
  }
  if (s.lr_sweep.empty() || !has(s.lr_placements, "pre") || !has(s.lr_placements, "post")) {
    w.verdict(Verdict::not_measured, unreached("A learning-rate sweep of Pre-LN and Post-LN", "--lr-placements, --lr-sweep"));
    return;
  }
  c.caption = "Each placement's lowest point is its best learning rate; the claim expects Pre-LN's 20–30% to the right of "
              "Post-LN's. The bars span the seeds; a learning rate with no point diverged for every seed.";
  w.chart(c, "lr_sweep.svg");
  w.doc().table(t);
  // The ratio of best learning rates, seed by seed, on the log scale (a ratio's spread is
  // multiplicative): the geometric mean and its 95% paired t-interval (summary.hpp). The
  // claim has a direction (> 1) and a size (1.2–1.3):
  //   supported      the interval lies above 1 and reaches into [1.2, 1.3];
  //   not supported  it lies below 1; or inside (1/1.1, 1.1), no difference of even 10%
  //                  (half the claimed 20%); or above 1 but wholly below 1.2 or above 1.3;
  //   inconclusive   otherwise, with the seeds that would settle it.
  std::vector<double> pre, post;
  for (auto seed : s.seeds) pre.push_back(best_lr(w.r, s, "pre", seed)), post.push_back(best_lr(w.r, s, "post", seed));
  const Interval q = paired_log_ratio_interval(pre, post);
  const std::string what = "Pre-LN's best lr / Post-LN's (the claim: 1.2–1.3)";
  w.doc().paragraph("The verdict takes the 95% interval of the ratio Pre-LN / Post-LN of the best learning rates, seed "
                    "by seed, from the paired t-interval of their logarithms: supported when it lies above 1 and reaches "
                    "into 1.2–1.3; not supported below 1, inside 1/1.1–1.1 (no difference of even 10%), or above 1 but "
                    "outside 1.2–1.3; inconclusive otherwise. A best lr at an end of the sweep (≥, ≤ above) is a bound, "
                    "and makes the ratio one: the verdict then rests on what the bound settles.");
  // A best lr at an end of the sweep is a bound, and so is the ratio: Pre-LN's at the top or
  // Post-LN's at the bottom make the true ratio at least the measured one (at_least), the other
  // two ends at most (at_most). The interval of a bound settles only what the bound settles.
  bool at_least = false, at_most = false;
  std::map<std::string, int> top, bottom;  // placement -> seeds whose best is at the sweep's highest / lowest lr
  for (std::size_t i = 0; i < s.seeds.size(); ++i) {
    const int e_pre = edges["pre"][i], e_post = edges["post"][i];
    top["Pre-LN"] += e_pre > 0, top["Post-LN"] += e_post > 0, bottom["Pre-LN"] += e_pre < 0, bottom["Post-LN"] += e_post < 0;
    at_least = at_least || e_pre > 0 || e_post < 0;
    at_most = at_most || e_pre < 0 || e_post > 0;
  }
  std::vector<std::string> parts;
  const auto [lowest, highest] = std::minmax_element(s.lr_sweep.begin(), s.lr_sweep.end());
  for (const auto& [where, counts, lr] : {std::tuple{"highest", &top, *highest}, std::tuple{"lowest", &bottom, *lowest}})
    for (const auto& [placement, n] : *counts)
      if (n > 0)
        parts.push_back(placement + "'s at the sweep's " + where + " lr, " + fmt(lr) + ", for " + std::to_string(n) + " of " +
                        std::to_string(s.seeds.size()) + " seeds");
  const std::string ends = "each best lr at an end of the sweep a bound (" + study::join(parts, "; ") + ")";
  if (q.n == 0) w.verdict(Verdict::not_measured, "Pre-LN or Post-LN diverged at every learning rate of the sweep for every seed.");
  else if (at_least && at_most)
    w.verdict(Verdict::not_measured, "inconclusive: " + what + ": " + fmt_interval(q) + ", " + ends +
                                         ", bounding the ratio in both directions: a wider --lr-sweep would settle it.");
  else if (at_least && q.low <= 1.3)
    w.verdict(Verdict::not_measured, "inconclusive: " + what + " is at least " + fmt_interval(q) + ", " + ends +
                                         ": the ratio may be larger; a --lr-sweep reaching further would settle it.");
  else if (at_least)
    w.verdict(Verdict::not_supported, what + ": at least " + fmt_interval(q) + " (" + ends +
                                          "): Pre-LN needs a higher lr, but more than 30% higher.");
  else if (at_most && q.high >= 1.2)
    w.verdict(Verdict::not_measured, "inconclusive: " + what + " is at most " + fmt_interval(q) + ", " + ends +
                                         ": a --lr-sweep reaching further would settle it.");
  else if (at_most)
    w.verdict(Verdict::not_supported, what + ": at most " + fmt_interval(q) + ": less than 20% higher, if higher at all.");
  else if (judge(q, 1, 0.1) == Call::supported && (q.high < 1.2 || q.low > 1.3))
    w.verdict(Verdict::not_supported, what + ": " + fmt_interval(q) + ": Pre-LN needs a higher lr, but " +
                                          (q.high < 1.2 ? "less than 20% higher." : "more than 30% higher."));
  else interval_verdict(w, what, q, 1, 0.1, "1/1.1–1.1");
}

void claim_10(Writer& w) {
  w.section(10, "the LayerNorm ε depends on FP16 or BF16",
            "The LayerNorm ε should be set between 1e-5 and 1e-12 depending on FP16 or BF16.",
            "None: tapegrad computes in float32 and float64 only.");
  w.verdict(Verdict::not_measured, "tapegrad has no half precision (FP16/BF16), so this claim cannot be tested here.");
}


}  // namespace depth_study
