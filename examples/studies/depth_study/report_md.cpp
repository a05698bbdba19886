// report_md.cpp — report.md: the setup of the run, then one section per question, each with
// its tables and charts. It states what was measured and nothing else: every sentence that
// gives a number or names a winner is computed from this run's results.
#include <cmath>
#include <sstream>
#include "common/study.hpp"
#include "common/report.hpp"

#include "outputs.hpp"

namespace depth_study {

using study::fmt;
using study::join;

namespace {

std::string init_description(const std::string& init) {
  if (init == "gpt2")
    return "GPT-2: Linear and Embedding weights N(0, 0.02²), the projections into the residual stream "
           "(attention output, FFN fc2) N(0, (0.02/√(2L))²), biases 0";
  if (init == "pytorch") return "PyTorch's module defaults: Linear weights and biases U(±1/√fan_in), Embedding N(0, 1)";
  return "Xavier: Linear weights Xavier-uniform, biases 0, embeddings N(0, 1/d_model)";
}

std::string image(const std::string& file, const std::string& alt) { return "![" + alt + "](" + file + ")\n"; }

void setup_section(std::ostringstream& md, const Settings& s, const SetupInfo& info) {
  const TrainOptions& t = s.train;
  std::vector<std::string> depths, lrs, variants;
  for (auto d : s.depths) depths.push_back(std::to_string(d));
  for (auto lr : s.sweep_lrs) lrs.push_back(fmt(lr));
  for (const auto& name : s.placements) {
    const Variant& v = variant_from_name(name);
    const bool alpha_is_one = tapegrad::nn::placement_info(v.placement).residual_scale && v.residual_scale == 1;
    variants.push_back(v.label + " (`" + v.name + "`): " + v.formula + (alpha_is_one ? " (α = 1)" : ""));
  }
  study::Table setup({"setting", "value"});
  setup.add({"data", info.data});
  setup.add({"tokenizer", info.tokenizer + ", " + std::to_string(info.vocab_size) + " tokens"});
  setup.add({"tokens", std::to_string(info.train_tokens) + " train, " + std::to_string(info.val_tokens) + " validation (the last 10%)"});
  setup.add({"unigram baseline", "the train split's unigram model (add-one smoothed), a model that ignores the context, scores " +
                                     fmt(info.unigram_train) + " nats/token on the train split, " + fmt(info.unigram_validation) +
                                     " on the validation batches, " + fmt(info.unigram_val_split) +
                                     " on the whole validation split (uniform over the vocabulary: ln V = " +
                                     fmt(std::log(static_cast<double>(info.vocab_size))) + ")"});
  setup.add({"placements", join(variants, "<br>")});
  setup.add({"depths L", join(depths) + " blocks"});
  setup.add({"model", "d_model " + std::to_string(s.shape.d_model) + ", " + std::to_string(s.shape.heads) + " heads, d_ff " +
                          std::to_string(4 * s.shape.d_model) + ", GELU (tanh), context " + std::to_string(s.shape.seq_len) +
                          " tokens, LM head tied to the token embedding, no dropout, LayerNorm/RMSNorm eps 1e-5"});
  std::vector<std::string> inits;
  for (const auto& i : s.inits) inits.push_back("`" + i + "`: " + init_description(i));
  setup.add({"init of the trained runs", join(inits, "<br>")});
  setup.add({"inits compared at initialization", join(s.all_inits())});
  setup.add({"training", "batches of " + std::to_string(t.batch) + " × " + std::to_string(s.shape.seq_len) + " tokens; " +
                             study::describe(t) + "; the same for every placement"});
  setup.add({"seed", std::to_string(s.seed) + ": every model is built right after manual_seed(seed); every run draws its "
                     "training batches from a generator seeded the same way, so all runs see the same batches in the same order"});
  setup.add({"probe batch", std::to_string(s.probe_batch) + " windows spread evenly over the first half of the validation "
                            "split: each snapshot is one forward and backward pass on it (gradients of the mean cross-entropy)"});
  setup.add({"validation loss", "mean cross-entropy over " + std::to_string(s.eval_batches) + " batches of " +
                                    std::to_string(t.batch) + " windows spread evenly over the second half of the validation split"});
  setup.add({"lr sweep", "L = " + std::to_string(s.sweep_depth) + ", " + std::to_string(s.sweep_steps) + " steps, lrs " +
                             join(lrs) + ", init " + s.inits.front() + ", otherwise as above"});
  setup.add({"machine", study::machine_line()});
  setup.add({"wall time", tapegrad::training::clock_str(info.seconds) + " (m:ss); load average (1, 5, 15 min) at the start " + info.load_start +
                              ", at the end " + info.load_end});
  md << "## Setup\n\nRerun it with:\n\n```sh\n" << info.command << "\n```\n\n" << setup.markdown() << "\n"
     << "**Status of a run.** `ok`; `non-finite`: the training loss or a gradient became NaN or Inf and the run stopped there; "
        "`no progress`: the mean training loss over the last tenth of the steps is not below the loss of the first step. "
        "In the lr sweep both count as diverged.\n\n";
}

// Measured facts worth seeing first.
void glance_section(std::ostringstream& md, const Settings& s, const SetupInfo& info, const std::vector<RunRecord>& runs) {
  md << "## At a glance\n\nComputed from the tables below:\n\n";
  for (const std::string& init : s.inits)
    for (std::int64_t depth : s.depths) {
      const RunRecord* best = nullptr;
      std::vector<std::string> failed, lopsided, unigram;
      for (const RunRecord* r : select(runs, init, depth)) {
        if (r->train.status == "ok" && (!best || r->train.val_loss < best->train.val_loss)) best = r;
        if (std::abs(r->train.final_loss - info.unigram_train) < 0.02) unigram.push_back(r->variant->label);
        if (r->train.status != "ok") failed.push_back(r->variant->label + " (" + r->train.status + ")");
        const double ratio = bottom_to_top_ratio(r->at_init);
        if (ratio < 0.1 || ratio > 10) lopsided.push_back(r->variant->label + " " + fmt(ratio, 3));
      }
      md << "- init " << init << ", L = " << depth << ": lowest validation loss after " << s.train.steps << " steps: "
         << (best ? best->variant->label + " (" + fmt(best->train.val_loss) + ")" : std::string("none (no run ended ok)"));
      if (!failed.empty()) md << "; not ok: " << join(failed);
      if (!unigram.empty()) md << "; final training loss within 0.02 of the unigram model's " << fmt(info.unigram_train) << ": " << join(unigram);
      md << "; ‖∇ block 1‖/‖∇ block L‖ at init outside [0.1, 10]: " << (lopsided.empty() ? "none" : join(lopsided)) << ".\n";
    }
  md << "\n";
}

void gradient_section(std::ostringstream& md, const Settings& s, const std::vector<RunRecord>& runs) {
  md << "## 1. Gradient norm by layer\n\n"
        "‖∇ block l‖ is the L2 norm of the gradient of the probe batch's mean cross-entropy with respect to all "
        "parameters of block l (1 = bottom, next to the embeddings; L = top, next to the output layer). "
        "The ratio ‖∇ block 1‖/‖∇ block L‖ is below 1 when gradients shrink toward the bottom, above 1 when they grow. "
        "‖∂loss/∂h₀‖ is the gradient that reaches the embeddings' output h₀ = tok_emb[x] + pos_emb.\n\n";
  for (const std::string& init : s.inits) {
    for (const std::string stage : {"init", "trained"}) {
      md << "### " << stage_label(stage, s.train.steps) << ", init " << init << "\n\n";
      study::Table t({"L", "placement", "‖∇ block 1‖", "‖∇ block L‖", "block 1 / block L", "‖∂loss/∂h₀‖", "probe loss"});
      for (std::int64_t depth : s.depths)
        for (const RunRecord* r : select(runs, init, depth)) {
          if (stage == "trained" && !r->has_after) {
            t.add({std::to_string(depth), r->variant->label, "-", "-", "-", "-", "(loss non-finite)"});
            continue;
          }
          const Snapshot& x = stage == "init" ? r->at_init : r->after;
          t.add({std::to_string(depth), r->variant->label, fmt(x.grad_norm.front()), fmt(x.grad_norm.back()),
                 fmt(bottom_to_top_ratio(x)), fmt(x.emb_output_grad), fmt(x.loss)});
        }
      md << t.markdown() << "\n" << image(ratio_chart_file(init, stage), "gradient ratio by depth");
      for (std::int64_t depth : s.depths) md << image(layer_chart_file("grad_norm", init, depth, stage), "gradient norm by layer");
      md << "\n";
    }
  }
  md << "### Does it depend on the initialization? (at initialization only)\n\n"
        "The same models built with each init and measured before any training: ‖∇ block 1‖/‖∇ block L‖, "
        "and in parentheses ‖∂loss/∂h₀‖.\n\n";
  std::vector<std::string> columns = {"L", "placement"};
  const auto inits = s.all_inits();
  for (const auto& i : inits) columns.push_back(i);
  study::Table t(columns);
  for (std::int64_t depth : s.depths)
    for (const std::string& name : s.placements) {
      std::vector<std::string> row = {std::to_string(depth), variant_from_name(name).label};
      for (const auto& i : inits)
        for (const RunRecord* r : select(runs, i, depth))
          if (r->variant->name == name)
            row.push_back(fmt(bottom_to_top_ratio(r->at_init), 3) + " (" + fmt(r->at_init.emb_output_grad, 3) + ")");
      t.add(row);
    }
  md << t.markdown() << "\n";
  for (const auto& i : inits) md << image(ratio_chart_file(i, "init"), "gradient ratio by depth, init " + i);
  for (const auto& i : inits) md << image(layer_chart_file("grad_norm", i, s.depths.back(), "init"), "gradient norm by layer, init " + i);
  md << "\n";
}

// Section 2 (RMS) and 3 (cosine): a table of first/last/extremes, then the charts.
void layer_metric_section(std::ostringstream& md, const Settings& s, const std::vector<RunRecord>& runs, bool cosine) {
  md << (cosine ? "## 3. Layer collapse: cosine similarity of consecutive layers\n\n"
                  "cos(h_l, h_l-1) is the cosine between block l's output and its input (h₀: the embeddings), averaged "
                  "over the probe batch's tokens. Near 1 across many layers: those blocks barely change the representation. "
                  "The charts show 1 − cos on a log scale, so that 0.01 and 0.0001 stay apart.\n\n"
                : "## 2. Activation RMS by layer\n\nRMS(h_l) = sqrt(mean(h_l²)) of each block's output on the probe batch.\n\n");
  for (const std::string& init : s.inits) {
    study::Table t(cosine ? std::vector<std::string>{"L", "placement", "stage", "cos layer 1", "cos layer L", "min", "mean", "max"}
                          : std::vector<std::string>{"L", "placement", "stage", "RMS h_1", "RMS h_L", "min", "max"});
    for (std::int64_t depth : s.depths)
      for (const RunRecord* r : select(runs, init, depth))
        for (const std::string stage : {"init", "trained"}) {
          if (stage == "trained" && !r->has_after) continue;
          const std::vector<double>& v = cosine ? (stage == "init" ? r->at_init : r->after).cosine : (stage == "init" ? r->at_init : r->after).rms;
          double lo = v.front(), hi = v.front(), sum = 0;
          for (double x : v) lo = std::min(lo, x), hi = std::max(hi, x), sum += x;
          std::vector<std::string> row = {std::to_string(depth), r->variant->label, stage_label(stage, s.train.steps),
                                          fmt(v.front()), fmt(v.back()), fmt(lo)};
          if (cosine) row.push_back(fmt(sum / static_cast<double>(v.size())));
          row.push_back(fmt(hi));
          t.add(row);
        }
    md << "Init " << init << ":\n\n" << t.markdown() << "\n";
    for (std::int64_t depth : s.depths)
      for (const std::string stage : {"init", "trained"})
        md << image(layer_chart_file(cosine ? "cosine" : "rms", init, depth, stage), cosine ? "cosine by layer" : "RMS by layer");
    md << "\n";
  }
}

void loss_section(std::ostringstream& md, const Settings& s, const SetupInfo& info, const std::vector<RunRecord>& runs) {
  md << "## 4. Training loss at equal learning rate (" << fmt(s.train.lr) << ")\n\n"
     << "Initial loss: step 1, before any update. Final training loss: mean over the last tenth of the steps. "
        "Charts show the training loss smoothed by an exponential moving average (β = 0.95, bias-corrected), and as a "
        "flat line the unigram model's cross-entropy on the train split (" << fmt(info.unigram_train) << "): a run that "
        "sits on that line predicts each token without using the context.\n\n";
  for (const std::string& init : s.inits) {
    study::Table t({"L", "placement", "parameters", "initial loss", "final training loss", "validation loss", "status", "seconds"});
    for (std::int64_t depth : s.depths)
      for (const RunRecord* r : select(runs, init, depth))
        t.add({std::to_string(depth), r->variant->label, std::to_string(r->parameters), fmt(r->train.initial_loss),
               fmt(r->train.final_loss), fmt(r->train.val_loss),
               r->train.status + (r->train.status == "non-finite" ? " at step " + std::to_string(r->train.loss.size()) : ""),
               fmt(r->train.seconds, 3)});
    md << "Init " << init << ":\n\n" << t.markdown() << "\n" << image(val_loss_chart_file(init), "validation loss by depth");
    for (std::int64_t depth : s.depths) md << image(loss_chart_file(init, depth), "training loss");
    md << "\n";
  }
}

void sweep_section(std::ostringstream& md, const Settings& s, const std::vector<SweepRecord>& sweep) {
  if (sweep.empty()) return;
  md << "## 5. Learning-rate sweep (L = " << s.sweep_depth << ", " << s.sweep_steps << " steps, init " << sweep.front().init
     << ")\n\nValidation loss after training at each lr; `non-finite` and `no progress` runs are diverged. "
        "Best lr: the lowest validation loss among the runs that did not diverge.\n\n";
  std::vector<std::string> columns = {"placement"};
  for (double lr : s.sweep_lrs) columns.push_back("lr " + fmt(lr));
  columns.push_back("best lr");
  study::Table t(columns);
  for (const std::string& name : s.placements) {
    std::vector<std::string> row = {variant_from_name(name).label};
    const SweepRecord* best = nullptr;
    for (const SweepRecord& w : sweep) {
      if (w.variant->name != name) continue;
      if (w.train.status == "ok") row.push_back(fmt(w.train.val_loss));
      else if (w.train.status == "non-finite") row.push_back("non-finite at step " + std::to_string(w.train.loss.size()));
      else row.push_back(w.train.status + " (" + fmt(w.train.val_loss) + ")");
      if (w.train.status == "ok" && (!best || w.train.val_loss < best->train.val_loss)) best = &w;
    }
    row.push_back(best ? fmt(best->lr) + " (" + fmt(best->train.val_loss) + ")" : "none: all diverged");
    t.add(row);
  }
  md << t.markdown() << "\n" << image(sweep_chart_file(sweep.front().init), "lr sweep") << "\n";
}

}  // namespace

std::string report_markdown(const Settings& s, const SetupInfo& info, const std::vector<RunRecord>& runs,
                            const std::vector<SweepRecord>& sweep) {
  std::ostringstream md;
  md << "# Depth study: residual and norm placement against depth\n\n"
        "Written by `depth_study`. Every number and chart below was measured by the run described in Setup; the raw "
        "numbers are in the CSV files listed at the end. How to read the charts: docs/depth-study.md in the tapegrad "
        "repository.\n\n";
  setup_section(md, s, info);
  glance_section(md, s, info, runs);
  gradient_section(md, s, runs);
  layer_metric_section(md, s, runs, false);
  layer_metric_section(md, s, runs, true);
  loss_section(md, s, info, runs);
  sweep_section(md, s, sweep);
  md << "## Files\n\n";
  for (const CsvSpec& spec : csv_specs()) md << "- `" << spec.file << "`: " << join(spec.columns) << "\n";
  md << "\n`stage` is `init` (before training) or `trained` (after it); `layer` counts blocks from 1 at the bottom.\n";
  return md.str();
}

}  // namespace depth_study
