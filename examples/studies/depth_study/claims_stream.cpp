// claims_stream.cpp — the residual stream's claims about depth: 12 (Depth-μP and CompleteP: the
// best learning rate transfers across depth), 13 (DyT's regime: ahead of LayerNorm with few
// tokens, behind with many; Derf beside it) and 14 (mHC keeps the stream bounded with depth
// where Hyper-Connections grow it). Each section gives the rule of its verdict; a comparison
// over seeds rests on a 95% interval (summary.hpp).
#include "claims_writer.hpp"

#include <algorithm>
#include <cmath>

#include "common/study.hpp"

namespace depth_study {

namespace {

// The stream stage's lr sweep of one placement at one depth (claim 12).
LrSweep transfer_sweep(const Settings& s, std::int64_t depth) {
  std::vector<double> lrs = s.transfer_lrs;
  std::sort(lrs.begin(), lrs.end());
  return {"stream", depth, lrs, s.setup};
}

// "3.0e-03", or "≤ 1.0e-03" / "≥ 1.0e-02" when the best is the sweep's edge (only a bound).
std::string lr_cell(double lr, int edge) {
  if (!std::isfinite(lr)) return "–";
  return std::string(edge < 0 ? "≤ " : edge > 0 ? "≥ " : "") + fmt(lr, 2);
}

// The val loss − Pre-LN's, seed by seed, of runs at one budget (claim 13).
Interval versus_pre(const Writer& w, const std::string& p, std::int64_t steps, std::int64_t warmup) {
  const auto val = [](const TrainedRecord& x) { return x.outcome == "diverged" ? NAN : x.train.val_loss; };
  const double lr = w.s.train.lr;
  return paired_t_interval(w.by_seed(w.stream_runs(p, w.s.scheme_depth, lr, steps, warmup), val),
                           w.by_seed(w.stream_runs("pre", w.s.scheme_depth, lr, steps, warmup), val));
}

// The rms of the stream after the last block over that of the embeddings (claim 14).
double growth(const std::vector<double>& rms) { return rms.size() < 2 ? NAN : rms.back() / rms.front(); }

}  // namespace

void claim_12(Writer& w) {
  const Settings& s = w.s;
  w.section(12, "Depth-μP and CompleteP: the best learning rate transfers across depth",
            "CompleteP: \"Some parameterizations fail to transfer optimal base HPs (such as learning rate) across "
            "changes in model depth\" … \"we identify and adopt the parameterization we call CompleteP that achieves "
            "both depth-wise HP transfer and non-lazy learning in all layers\" (Dey et al. 2025, arXiv 2505.01618: each "
            "branch × 1/L with Adam's ε and learning rates to match; GPT-style models of 2 to 128 layers, trained on 20 "
            "tokens per parameter). Its forerunners scale the branch by 1/√L: \"residual architectures … trained with "
            "this parameterization exhibit transfer of optimal hyperparameters across width and depth\" (Bordelon et al. "
            "2023, arXiv 2309.16620, on ResNets and ViTs), while Depth-μP's own paper finds \"fundamental limitations\" "
            "when each block holds more than one layer, as a transformer's does (Yang et al. 2023, arXiv 2310.02244).",
            "Pre-LN (the standard parametrization), Depth-μP (each update × (2/L)^½) and CompleteP (× 2/L), from a base "
            "of 2 blocks, with Adam's lr and ε scaled by optim::depth_scaled_groups; each trained at " +
                depth_list(s.transfer_depths) + " blocks at learning rates " + study::comma_list(s.transfer_lrs) +
                ". Per seed, the best lr is the vertex of a parabola in log(lr) through the lowest validation loss and "
                "its neighbours (the sweep's edge where the lowest is there). The drift is the best lr at the deepest "
                "depth over the best lr at the shallowest.");
  if (s.transfer_depths.size() < 2 || s.transfer_lrs.size() < 2 || s.transfer_placements.empty()) {
    w.verdict(Verdict::not_measured, unreached("An lr sweep at two depths or more", "--transfer-placements, --transfer-depths, --transfer-lrs"));
    return;
  }
  const std::int64_t shallow = *std::min_element(s.transfer_depths.begin(), s.transfer_depths.end());
  const std::int64_t deep = *std::max_element(s.transfer_depths.begin(), s.transfer_depths.end());
  std::vector<std::string> cols = {"placement"};
  for (auto d : s.transfer_depths) cols.push_back("best lr at L=" + std::to_string(d) + " per seed");
  cols.push_back("drift, L=" + std::to_string(deep) + " over L=" + std::to_string(shallow) + " (95% interval)");
  study::Table t(cols);
  study::LineChart c("Validation loss against the learning rate, at each depth", "learning rate (log scale)",
                     "validation loss (nats/token)");
  c.log_x = true;
  c.caption = "One colour per parametrization, solid at the shallowest depth and dashed at the deepest: where the "
              "minimum of a dashed curve sits above its solid one, the best lr moved with depth. Mean over the seeds, "
              "the bar spans ± the spread.";
  std::vector<std::pair<std::string, Interval>> drifts;
  for (const std::string& p : s.transfer_placements) {
    std::vector<std::string> row = {label(p)};
    std::vector<double> at_shallow, at_deep;
    for (auto d : s.transfer_depths) {
      const LrSweep sweep = transfer_sweep(s, d);
      std::vector<std::string> cells;
      for (auto seed : s.seeds) {
        const double lr = best_lr(w.r, sweep, p, seed);
        cells.push_back(lr_cell(lr, best_lr_edge(w.r, sweep, p, seed)));
        if (d == shallow) at_shallow.push_back(lr);
        if (d == deep) at_deep.push_back(lr);
      }
      row.push_back(study::join(cells));
      if (d == shallow || d == deep) {
        study::Series se;
        se.name = label(p) + ", L=" + std::to_string(d);
        se.markers = true;
        se.dashed = d == deep;
        for (double lr : sweep.lrs) add_point(se, lr, val_stat(w.stream_runs(p, d, lr)));
        c.series.push_back(se);
      }
    }
    const Interval drift = paired_log_ratio_interval(at_deep, at_shallow);
    row.push_back(fmt_interval(drift));
    t.add(row);
    drifts.emplace_back(p, drift);
  }
  w.doc().table(t, "≤ and ≥ mark a best lr at the sweep's edge: a bound only. The drift is the geometric mean of the "
                   "seeds' ratios with its 95% interval (paired t on the log).");
  w.chart(c, "lr_transfer.svg");
  // The rule: a parametrization transfers when its drift's interval lies inside (1/1.5, 1.5),
  // drifts when the interval excludes 1, and is open otherwise. The band is half a step of a
  // sweep in factors of about 3: a drift smaller than that is below what the sweep resolves.
  w.doc().paragraph("The rule: the best lr **transfers** when the drift's 95% interval lies inside (1/1.5, 1.5), less "
                    "than half a step of the sweep; it **drifts** when the interval excludes 1; otherwise it is open.");
  const auto reading = [](const Interval& i) {
    if (i.n < 2 || !std::isfinite(i.low)) return std::string("open");
    if (i.low > 1 / 1.5 && i.high < 1.5) return std::string("transfers");
    if (i.low > 1 || i.high < 1) return std::string("drifts");
    return std::string("open");
  };
  for (const auto& [p, drift] : drifts) {
    const std::string r = reading(drift), fig = label(p) + "'s drift from " + std::to_string(shallow) + " to " +
                                               std::to_string(deep) + " blocks: " + fmt_interval(drift);
    const bool standard = variant_from_name(p).branch_exponent == 0;
    // The claim: the standard parametrization drifts, the depth parametrizations transfer.
    if (r == "open")
      w.verdict(Verdict::not_measured, "inconclusive: " + fig + " neither excludes 1 nor lies inside (1/1.5, 1.5) (more --seeds, "
                                       "a finer --transfer-lrs).");
    else if (standard)
      w.verdict(r == "drifts" ? Verdict::supported : Verdict::not_supported,
                fig + (r == "drifts" ? ": the standard parametrization's best lr moves with depth, as claimed."
                                     : ": the standard parametrization's best lr holds at this scale; there is no drift to fix."));
    else
      w.verdict(r == "transfers" ? Verdict::supported : Verdict::not_supported,
                fig + (r == "transfers" ? ": it transfers." : ": it drifts."));
  }
  if (deep < 64)
    w.doc().paragraph("The claim spans 2 to 64 blocks and more; this run reached " + std::to_string(deep) +
                      " (--transfer-depths), so its verdicts hold for that range only.");
}

void claim_13(Writer& w) {
  const Settings& s = w.s;
  w.section(13, "DyT's regime: ahead of LayerNorm with few tokens, behind with many",
            "DyT: \"Transformers without normalization can match or exceed the performance of their normalized "
            "counterparts, mostly without hyperparameter tuning\" (Zhu et al. 2025, arXiv 2503.10622). Verma 2026 "
            "(arXiv 2604.23434) finds the sign depends on the budget: \"DyT improves validation loss by 27.3% at 64M/1M "
            "but worsens it by 18.8% at 64M/118M\" (parameters/tokens, GPT-2-family models). Derf, its successor, "
            "\"outperforms LayerNorm, RMSNorm, and DyT across a wide range of domains\" (Chen et al. 2025, arXiv 2512.10938).",
            "Pre-LN with LayerNorm, and with DyT and Derf in its place (each with the papers' token embeddings × a "
            "learned scalar from √d_model, without which they stall on the unigram plateau: docs/residuals.md), at " +
                std::to_string(s.scheme_depth) + " blocks, lr " + fmt(s.train.lr) +
                ", trained for " + study::comma_list(s.norm_free_budgets) + " × --steps (the warm-up scaled alike), "
                "the same batches in each; the study's models are " + std::to_string(s.shape.d_model) +
                " wide, a budget of " + std::to_string(s.train.steps) + " steps is " +
                fmt(static_cast<double>(s.train.steps * s.train.batch * s.shape.seq_len), 3) + " tokens.");
  std::vector<double> budgets = s.norm_free_budgets;
  std::sort(budgets.begin(), budgets.end());
  if (budgets.empty() || s.norm_free_placements.empty()) {
    w.verdict(Verdict::not_measured, unreached("DyT and Derf", "--norm-free-placements, --norm-free-budgets"));
    return;
  }
  study::Table t({"placement", "steps", "tokens", "val loss", "Pre-LN's", "− Pre-LN's (95% interval)", "reading"});
  study::LineChart c("DyT and Derf against LayerNorm, by the tokens trained", "training tokens (log scale)",
                     "validation loss − Pre-LN (LayerNorm)'s (nats/token)");
  c.log_x = true;
  c.caption = "Below 0 the norm-free model is ahead of LayerNorm. The claim: below 0 at the left, above 0 at the right. "
              "Mean over the seeds of the paired difference, the bar its 95% interval.";
  const double band = 0.02;  // nats/token, about 1% of the losses here
  for (const std::string& p : s.norm_free_placements) {
    study::Series se;
    se.name = label(p);
    se.markers = true;
    Call first = Call::too_few, last = Call::too_few;
    Interval first_i, last_i;
    for (std::size_t k = 0; k < budgets.size(); ++k) {
      const std::int64_t steps = budget_steps(s, budgets[k]);
      const std::int64_t warmup = std::llround(static_cast<double>(s.setup.warmup) * budgets[k]);
      const Interval i = versus_pre(w, p, steps, warmup);
      const double tokens = static_cast<double>(steps * s.train.batch * s.shape.seq_len);
      // ahead: Pre-LN's − p's > 0
      const Interval ahead{-i.estimate, -i.high, -i.low, i.n, i.method};
      const Call call = judge(ahead, 0, band);
      std::string reading = call == Call::supported ? "ahead" : call == Call::inconclusive ? "open" : call == Call::too_few ? "–"
                            : i.low > 0 ? "behind" : "a tie";
      t.add({label(p), std::to_string(steps), fmt(tokens, 3), fmt_stat(val_stat(w.stream_runs(p, s.scheme_depth, s.train.lr, steps, warmup))),
             fmt_stat(val_stat(w.stream_runs("pre", s.scheme_depth, s.train.lr, steps, warmup))), fmt_interval(i), reading});
      se.x.push_back(tokens);
      se.y.push_back(i.estimate);
      se.y_low.push_back(i.low);
      se.y_high.push_back(i.high);
      if (k == 0) first = call, first_i = i;
      if (k + 1 == budgets.size()) last = call, last_i = i;
    }
    c.series.push_back(se);
    // The rule: the regime holds when p is ahead at the smallest budget and behind at the
    // largest (each interval excluding 0 that way); it fails when p's side is the same at both
    // ends (ahead at both, behind at both, or ties within ±0.02); otherwise open.
    const std::string fig = label(p) + " − Pre-LN at " + fmt(budgets.front(), 3) + "× the steps: " + fmt_interval(first_i) +
                            "; at " + fmt(budgets.back(), 3) + "×: " + fmt_interval(last_i);
    const bool behind_last = last == Call::not_supported && last_i.low > 0;
    const bool behind_first = first == Call::not_supported && first_i.low > 0;
    if (budgets.size() < 2)
      w.verdict(Verdict::not_measured, label(p) + ": one budget only, so no regime can show (--norm-free-budgets).");
    else if (first == Call::supported && behind_last)
      w.verdict(Verdict::supported, fig + ": ahead with few tokens, behind with many.");
    else if ((first == Call::supported && last == Call::supported) || (behind_first && behind_last) ||
             (first == Call::not_supported && last == Call::not_supported && !behind_first && !behind_last))
      w.verdict(Verdict::not_supported, fig + ": the same side at both ends of the budgets, no flip.");
    else
      w.verdict(Verdict::not_measured, "inconclusive: " + fig + ": an end of the budgets is open or the sides do not flip "
                                       "as claimed (the table above).");
  }
  w.doc().table(t, "Validation loss, mean ± spread over the seeds; the difference is paired by seed. Reading: ahead or "
                   "behind Pre-LN when the interval excludes 0, a tie inside ±" + fmt(band) + ", open otherwise.");
  w.chart(c, "norm_free_by_budget.svg");
  w.doc().paragraph("Verma's budgets span 1M to 118M tokens at 64M parameters; this study's span " +
                    fmt(static_cast<double>(budget_steps(s, budgets.front()) * s.train.batch * s.shape.seq_len), 3) + " to " +
                    fmt(static_cast<double>(budget_steps(s, budgets.back()) * s.train.batch * s.shape.seq_len), 3) +
                    " tokens at a model a thousand times smaller: tokens per parameter, not tokens, is the scale to compare.");
}

void claim_14(Writer& w) {
  const Settings& s = w.s;
  w.section(14, "mHC keeps the stream bounded with depth, where Hyper-Connections grow it",
            "Of unconstrained Hyper-Connections: \"the Amax Gain Magnitude yields extreme values with peaks of 3000, a "
            "stark divergence from 1 that confirms the presence of exploding residual streams\"; of mHC, whose residual "
            "mixing is projected onto the doubly stochastic matrices: \"the deviation increases but remains bounded, "
            "reaching a maximum value of approximately 1.6\" (Xie et al. 2025, arXiv 2512.24880; a 27B model of 30 "
            "blocks, n = 4). The issue asks it to 256 blocks.",
            "Pre-LN, HC and mHC (n = 4 copies, dynamic) at " + depth_list(s.hc_depths) + " blocks, lr " + fmt(s.train.lr) +
                ". The stream's size is the rms of what each block reads on the probe batch (HC and mHC: the sum of the "
                "copies, what the head reads), at init and after training; its growth is the rms after the last block "
                "over that of the embeddings. DeepSeek measured the composite mapping's gain instead: the stream's size "
                "is what that gain acts on.");
  if (s.hc_depths.empty() || !has(s.hc_placements, "hc") || !has(s.hc_placements, "mhc")) {
    w.verdict(Verdict::not_measured, unreached("HC and mHC", "--hc-placements, --hc-depths"));
    return;
  }
  const auto rms_growth = [](bool after) {
    return [after](const TrainedRecord& x) { return growth(after ? x.stream_rms_after : x.stream_rms_init); };
  };
  std::vector<std::string> cols = {"placement"};
  for (auto d : s.hc_depths) cols.push_back("L=" + std::to_string(d) + ": at init → trained");
  study::Table t(cols);
  for (const std::string& p : s.hc_placements) {
    std::vector<std::string> row = {label(p)};
    for (auto d : s.hc_depths) {
      std::vector<double> init, after;
      for (auto* x : w.stream_runs(p, d, s.train.lr)) {
        init.push_back(rms_growth(false)(*x));
        if (x->measured_stream) after.push_back(rms_growth(true)(*x));
      }
      row.push_back(fmt_stat(stat_of(init)) + " → " + fmt_stat(stat_of(after)));
    }
    t.add(row);
  }
  w.doc().table(t, "The stream's growth, rms after the last block / rms of the embeddings, mean ± spread over the seeds.");
  // The chart: the stream's rms by layer at the deepest depth after training.
  const std::int64_t deep = *std::max_element(s.hc_depths.begin(), s.hc_depths.end());
  study::LineChart c("The stream's size by layer after training, " + std::to_string(deep) + " blocks", "layer (0: the embeddings)",
                     "rms of the stream the next block reads");
  c.integer_x = true;
  c.log_y = true;
  c.caption = "Mean over the seeds. Where a curve climbs, the stream grows with depth.";
  for (const std::string& p : s.hc_placements) {
    study::Series se;
    se.name = label(p);
    std::vector<std::vector<double>> per_seed;
    for (auto* x : w.stream_runs(p, deep, s.train.lr))
      if (x->measured_stream) per_seed.push_back(x->stream_rms_after);
    for (std::size_t l = 0; !per_seed.empty() && l < per_seed.front().size(); ++l) {
      std::vector<double> v;
      for (const auto& r : per_seed) v.push_back(l < r.size() ? r[l] : NAN);
      add_point(se, static_cast<double>(l), stat_of(v));
    }
    c.series.push_back(se);
  }
  w.chart(c, "stream_by_layer.svg");
  // The rule, at the deepest depth after training: the 95% paired interval of HC's growth over
  // mHC's (on the log). Supported when it lies above 1 (HC's stream grows more); not supported
  // when below 1 or inside (1/1.25, 1.25); open otherwise. Depth 256 is what the claim names.
  const auto after = rms_growth(true);
  const Interval i = paired_log_ratio_interval(w.by_seed(w.stream_runs("hc", deep, s.train.lr), after),
                                               w.by_seed(w.stream_runs("mhc", deep, s.train.lr), after));
  interval_verdict(w, "HC's stream growth over mHC's at " + std::to_string(deep) + " blocks after training", i, 1, 0.25, "(1/1.25, 1.25)");
  if (deep < 256)
    w.verdict(Verdict::not_measured, "256 blocks: this run reached " + std::to_string(deep) + " (--hc-depths).");
}

}  // namespace depth_study
