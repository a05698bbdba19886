// claims.cpp — the report around the claims: the verdicts at a glance, the setup, the grid and
// its deepest-trainable-depth chart, then each claim's section (claims_gradients.cpp,
// claims_training.cpp, claims_variants.cpp, claims_diagnostics.cpp, claims_stream.cpp, claims_schemes.cpp: one function per claim, with the rule of its verdict), the setups side
// by side and the PyTorch twin. A rule only ever speaks of what the run measured: a stage that
// was not run, a depth that was not reached, gives "not measured" with the reason.
#include "claims.hpp"
#include "claims_budget.hpp"
#include "claims_writer.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <set>

#include "common/study.hpp"
#include "summary.hpp"

namespace depth_study {

namespace {

// ---------------------------------------------------------------- the sections

// "<lead>took 1:05 (65.2 s, 1 thread)" when the PyTorch twin ran, else "".
std::string torch_time(const TorchOutcome& t, const std::string& lead) {
  if (!t.skipped.empty() || t.runs.empty()) return "";
  return lead + "took " + tapegrad::training::clock_str(t.seconds) + " (" + fmt(t.seconds, 3) + " s, " +
         std::to_string(t.threads) + " thread" + (t.threads == 1 ? "" : "s") + ")";
}

void setup_section(Writer& w) {
  const Settings& s = w.s;
  const SetupInfo& i = w.r.info;
  auto& d = w.doc();
  d.heading("Setup");
  // A resumed plan's last sitting is not the run: say what it was (time_section gives the runs' own time).
  const std::string took =
      i.resumed_runs == 0
          ? "the whole run took " + tapegrad::training::clock_str(i.seconds)
          : "the plan ran in several sittings, the last of which resumed " + std::to_string(i.resumed_runs) + " of the " +
                std::to_string(i.runs) + " runs from the records and took " + tapegrad::training::clock_str(i.seconds);
  d.bullets({
      "Machine: " + study::machine_line() + "; " + took + torch_time(w.r.torch, ", of which the PyTorch twin ") +
          "; load average " + i.load_start + " at the start, " + i.load_end + " at the end" +
          (i.resumed_runs == 0 ? "." : " of that sitting."),
      "Data: " + i.data + "; " + i.tokenizer + " tokenizer, " + std::to_string(i.vocab_size) + " tokens; " +
          std::to_string(i.train_tokens) + " train / " + std::to_string(i.val_tokens) + " validation tokens.",
      "Models: decoder-only transformer LMs, d_model " + std::to_string(s.shape.d_model) + ", " +
          std::to_string(s.shape.heads) + " heads, context " + std::to_string(s.shape.seq_len) + " tokens, GELU (tanh) FFN of 4·d_model; " +
          s.setup.describe() + " unless a section says otherwise.",
      "Training: " + study::describe(s.train) + "; batches of " + std::to_string(s.train.batch) + " windows.",
      "Seeds: " + study::comma_list(s.seeds) + ". Seed s draws the initial weights and the order of the batches; every "
          "trained figure is the mean ± the standard deviation over the seeds, with the runs that diverged counted.",
      "A run **trains** when its loss stays finite and its final training loss (the mean of the last tenth of the "
          "steps) ends at least " + fmt(s.plateau_margin) + " nats/token below the **plateau** of those same batches: "
          "the cross-entropy the train split's unigram model scores on them, the best any model blind to the context can "
          "do there. Otherwise it **diverged** (a NaN or Inf loss) or stayed on the plateau. (The train split's unigram "
          "model scores " + fmt(i.unigram_train) + " on the train split and " + fmt(i.unigram_validation) +
          " on the validation batches, whose texts differ.)",
  });
  d.paragraph("Rerun this study with:");
  d.code(i.command);
}

// judged: the claims' sections built once already, for their verdicts and their headings' ids
// (the same in this report, whose other headings come before and differ). Each verdict links
// to its claim's section.
// Where the time went: the runs' own clocks, summed over the processes that ran them, against
// the wall time of the plan times the processes. The harness ratio is the plan's process-time
// per LM block-step over the steps' own time per block-step: what everything but the training
// steps adds (the runs at initialization, building the models, validation, the skip analysis,
// starting the processes and waiting for the last). A plan that ran in several sittings has
// the runs' clocks of every sitting but the wall time of the last only, so the shares are then
// of the runs' own time, and the time between runs, not recorded, is left out rather than
// shown as a difference that would come out negative.
void time_section(Writer& w) {
  const SetupInfo& i = w.r.info;
  double steps = 0, rest = 0, profile = 0, translate = 0, block_steps = 0;
  std::set<std::size_t> seen;  // a run recorded for two stages counts once
  for (const TrainedRecord& t : w.r.trained) {
    if (!seen.insert(t.task).second) continue;
    steps += t.train.step_seconds;
    rest += t.train.seconds - t.train.step_seconds + t.measure_seconds;
    block_steps += static_cast<double>(t.depth) * static_cast<double>(t.train.steps_done);
  }
  for (const ProfileRecord& p : w.r.profile) profile += p.seconds;
  for (const TranslateRecord& t : w.r.translate) translate += t.seconds;
  const bool one_sitting = i.resumed_runs == 0;
  const double process_time = i.plan_seconds * static_cast<double>(i.processes);
  const double total = one_sitting ? process_time : steps + rest + profile + translate;
  w.doc().heading("Where the time goes");
  study::Table t({"what", "process-seconds", "share"});
  auto row = [&](const std::string& what, double v) { t.add({what, fmt(v, 4), fmt(100 * v / total, 3) + "%"}); };
  row("LM training steps (batch, forward, cross-entropy, backward, clipping, AdamW)", steps);
  row("the rest of the LM runs (the optimizer, validation, the snapshot and skip analysis at the skip depth, the stream "
      "stage's stream sizes and logit lens)", rest);
  row("the runs at initialization (profile)", profile);
  row("translation runs", translate);
  if (one_sitting) {
    row("building the LM models, starting the processes, reading the records, waiting for the last process",
        process_time - steps - rest - profile - translate);
    w.doc().table(t, "The plan took " + tapegrad::training::clock_str(i.plan_seconds) + " in " + std::to_string(i.processes) +
                         " process(es): " + fmt(process_time, 4) + " process-seconds, each run timed by its own clock.");
  } else {
    w.doc().table(t, "The plan ran in several sittings; this last one resumed " + std::to_string(i.resumed_runs) + " of the " +
                         std::to_string(i.runs) + " runs from the records and took " + tapegrad::training::clock_str(i.plan_seconds) +
                         ". The shares are of the runs' own clocks over every sitting, " + fmt(total, 4) +
                         " process-seconds; the time between runs was not recorded in the earlier sittings.");
  }
  std::string text = "LM block-steps trained: " + fmt(block_steps, 4) + ". Per block-step the training steps took " +
                     fmt(1e3 * steps / block_steps, 3) + " ms";
  if (one_sitting) {
    text += " and the LM part of the plan " + fmt(1e3 * (process_time - translate) / block_steps, 3) +
            " ms of process time: the harness costs ×" + fmt((process_time - translate) / steps, 3) + " the steps alone.";
  } else {
    text += " and the LM runs " + fmt(1e3 * (steps + rest + profile) / block_steps, 3) + " ms of their own time (×" +
            fmt((steps + rest + profile) / steps, 3) + " the steps alone); the harness's share between the runs needs a "
            "plan run in one sitting.";
  }
  w.doc().paragraph(text);
}

void glance_section(Writer& w, const Report& judged) {
  w.doc().heading("Verdicts at a glance");
  study::Table t({"claim", "verdict", "what was measured"});
  for (const ClaimVerdict& v : judged.verdicts) {
    const auto section = judged.sections.find(v.claim);  // (every claim has one: Writer::section)
    const std::string name = study::verdict_name(v.verdict);
    t.add({std::to_string(v.claim), section == judged.sections.end() ? name : "[" + name + "](#" + section->second + ")", v.text});
  }
  w.doc().table(t, "Each verdict links to its claim's section.");
}

void grid_section(Writer& w) {
  const Settings& s = w.s;
  w.doc().heading("The grid: which depth still trains");
  w.doc().paragraph("Every placement of the grid at every depth of " + depth_list(s.depths) + " at learning rates " +
                    study::comma_list(s.lrs) + ", and " + study::join(s.deep_placements) + " also at " + depth_list(s.deep_depths) +
                    " at learning rate " + fmt(s.deep_lr) + " (a 128-block run costs a whole row of the grid), for each seed. Each cell gives the best learning rate's outcome: how many "
                    "seeds trained, and the validation loss (mean ± spread over the seeds that did not diverge).");
  w.doc().table(grid_table(w, s.placements));
  // The deepest-trainable-depth chart: x = lr, y = depth, one series per placement; the point is
  // the median over seeds, the bar spans the seeds. The depth axis is categorical, the grid's
  // depths evenly spaced above a "none" row at 0: a placement that trains at no depth (0) is
  // drawn there, where a log axis could not show it.
  study::LineChart c("Deepest trainable depth by learning rate", "learning rate (log scale)", "deepest depth that trains");
  c.log_x = true;
  const auto depths = grid_depths(s);
  depth_ticks(c, depths);
  c.caption = "Higher is deeper: the median over the seeds of the deepest grid depth that still trains (at it and every "
              "smaller depth); the bar spans the seeds. The bottom row, *none*, holds the placements that did not train "
              "even at the smallest depth. Markers side by side at one learning rate have the same value: each "
              "placement has its own shape, moved a little sideways where they coincide.";
  study::Table t({"placement", "lr", "deepest trainable depth per seed"});
  for (const auto& p : s.placements) {
    study::Series se;
    se.name = label(p);
    se.markers = true;
    // The deepest grid depth this placement ran at: a seed that trains there is "≥" it.
    std::int64_t deepest_run = 0;
    for (auto dd : grid_depths(s))
      if (!runs_of(w.r, "grid", p, dd, lrs_at(s, dd).back(), s.setup).empty()) deepest_run = dd;
    for (double lr : s.lrs) {
      std::vector<double> per_seed;
      std::vector<std::string> text;
      for (auto seed : s.seeds) {
        const auto d = deepest_trainable(w.r, s, p, lr, seed);
        per_seed.push_back(depth_row(depths, static_cast<double>(d)));
        text.push_back(d == 0 ? "< " + std::to_string(grid_depths(s).front())
                              : d == deepest_run ? "≥ " + std::to_string(d) : std::to_string(d));
      }
      t.add({label(p), fmt(lr, 2), study::join(text)});
      std::vector<double> finite;
      for (double v : per_seed)
        if (std::isfinite(v)) finite.push_back(v);
      std::sort(finite.begin(), finite.end());
      se.x.push_back(lr);
      se.y.push_back(finite.empty() ? NAN : finite[finite.size() / 2]);
      se.y_low.push_back(finite.empty() ? NAN : finite.front());
      se.y_high.push_back(finite.empty() ? NAN : finite.back());
    }
    c.series.push_back(se);
  }
  w.chart(c, "deepest_trainable_depth.svg");
  w.doc().table(t, "The deepest grid depth at which a seed trains, at that depth and every smaller one; ≥ where it "
                   "trained at the deepest depth it ran (the deep depths ran at lr " + fmt(s.deep_lr) + " only).");
}

void torch_section(Writer& w) {
  const Settings& s = w.s;
  w.doc().heading("The same runs in PyTorch");
  if (!w.r.torch.skipped.empty() || w.r.torch.runs.empty()) {
    w.doc().paragraph("Not run: " + (w.r.torch.skipped.empty() ? std::string("--no-torch") : w.r.torch.skipped) + ".");
    return;
  }
  w.doc().paragraph("examples/studies/depth_study/depth_study_torch.py trained " + study::join(s.torch_placements) + " at " +
                    std::to_string(s.torch_depth) + " layers in PyTorch " + w.r.torch.torch_version + " on the same "
                    "tokens, batches, validation batches and settings, from its own initial draws of the same init scheme. "
                    "Its " + std::to_string(w.r.torch.runs.size()) + " runs, one after another, " +
                    torch_time(w.r.torch, "") + ", Python's start included. Side by side with tapegrad's runs of the same "
                    "configuration:");
  study::Table t({"placement", "tapegrad: train", "tapegrad: val loss", "PyTorch: train", "PyTorch: val loss"});
  for (const auto& p : s.torch_placements) {
    std::vector<const TrainedRecord*> ours;
    for (const char* stage : {"grid", "setups"})
      if (ours.empty()) ours = runs_of(w.r, stage, p, s.torch_depth, s.train.lr, s.setup);
    std::vector<double> val;
    int trains = 0, n = 0;
    for (const TorchRun& x : w.r.torch.runs)
      if (x.placement == p) {
        ++n;
        if (x.status != "non-finite") val.push_back(x.val_loss);
        // the same batches as tapegrad's run of this seed, so the same plateau
        double plateau = NAN;
        for (auto* o : ours)
          if (o->seed == x.seed) plateau = o->train.plateau;
        trains += x.status != "non-finite" && x.final_loss < plateau - s.plateau_margin;
      }
    t.add({label(p), ours.empty() ? "–" : trains_count(ours), ours.empty() ? "–" : fmt_stat(val_stat(ours)),
           std::to_string(trains) + "/" + std::to_string(n), fmt_stat(stat_of(val))});
  }
  w.doc().table(t, "lr " + fmt(s.train.lr) + ", " + s.setup.describe() + "; mean ± spread over the seeds");
}

void setups_section(Writer& w) {
  const Settings& s = w.s;
  if (s.setups.empty()) return;
  w.doc().heading("Dependence on the setup");
  w.doc().paragraph(study::join(s.setup_placements) + " at " + std::to_string(s.setup_depth) + " layers, lr " + fmt(s.train.lr) +
                    ", under each setup (head, init, warm-up steps). Claims 3 and 7 quote these rows.");
  std::vector<std::string> cols = {"setup"};
  for (const auto& p : s.setup_placements) cols.push_back(label(p));
  study::Table t(cols);
  for (const std::string& text : s.setups) {
    const Setup setup = Setup::parse(text);
    std::vector<std::string> row = {setup.describe()};
    for (const auto& p : s.setup_placements) {
      auto runs = runs_of(w.r, "setups", p, s.setup_depth, s.train.lr, setup);
      row.push_back(trains_count(runs) + " train, val " + fmt_stat(val_stat(runs)));
    }
    t.add(row);
  }
  w.doc().table(t);
}

}  // namespace

// Every claim's section, in the order of the report.
constexpr void (*kClaims[])(Writer&) = {claim_1,  claim_2,  claim_3,  claim_4,  claim_5,  claim_6,  claim_7,  claim_8,  claim_9,
                                        claim_10, claim_11, claim_12, claim_13, claim_14, claim_15, claim_16, claim_17, claim_18};

Report build_report(const Settings& s, const Results& r) {
  // The claims are judged first into a scratch report, so that the verdicts can be listed at
  // the top of the real one.
  Report scratch;
  {
    Writer w{s, r, scratch};
    for (auto* claim : kClaims) claim(w);
  }
  Report out;
  Writer w{s, r, out};
  w.doc().paragraph("Ten claims that articles make about residual connections and normalization in deep transformers, "
                    "the seed article's training diagnostic as an eleventh, and seven claims of the residual stream's newer "
                    "designs (depth parametrizations, norm-free blocks, Hyper-Connections, value residual, nGPT, DenseFormer, "
                    "the logit lens), each measured on this machine. Every verdict below "
                    "comes from the figures of its section; what the run did not measure says so. Where a verdict compares two "
                    "figures over the seeds it rests on a 95% interval, formatted \"0.12 [0.03, 0.21] (paired t, 3 seeds)\": "
                    "supported when the interval excludes no effect in the claimed direction, not supported when it excludes "
                    "it in the other or lies inside a stated equivalence band, and otherwise \"not measured\" marked "
                    "inconclusive, with the seeds that would settle it.");
  glance_section(w, scratch);
  setup_section(w);
  time_section(w);
  grid_section(w);
  for (auto* claim : kClaims) claim(w);
  setups_section(w);
  budget_section(w);
  torch_section(w);
  return out;
}

}  // namespace depth_study
