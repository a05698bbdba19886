// report.cpp — translate's tables, charts, report.md and --check.
#include "report.hpp"

#include <algorithm>
#include <sstream>

namespace translate {

using namespace tapegrad;

training::Arguments arguments(const Settings& s) {
  auto i = [](std::int64_t v) { return std::to_string(v); };
  return study::study_arguments({{"--placements", study::comma_list(s.placements)}, {"--layers", study::comma_list(s.layers)},
                                  {"--d-model", i(s.d_model)}, {"--heads", i(s.heads)}, {"--d-ff", i(s.d_ff)},
                                  {"--activation", s.activation}, {"--dropout", study::fmt(s.dropout, 6)}, {"--init", s.init},
                                  {"--b2t-scaling", s.b2t_scaling}},
                                 s,
                                 {{"--batch", i(s.batch)}, {"--eval-interval", i(s.eval_interval)}, {"--val-size", i(s.val_size)},
                                  {"--examples", i(s.examples)}},
                                 s);
}

namespace {

std::string status(const RunResult& r, double baseline) {
  if (r.diverged()) return "diverged at step " + std::to_string(r.diverged_at);
  if (!(r.val_loss.back() < baseline)) return "not below the unigram baseline";
  return "trained";
}

const std::vector<std::string> kSummaryColumns = {
    "placement", "layers_per_side", "parameters", "steps_run", "status", "diverged_at_step", "final_train_loss",
    "final_val_loss", "token_accuracy", "exact_match", "seconds"};

study::Table summary_table(const std::vector<RunResult>& runs, double baseline) {
  study::Table t(kSummaryColumns);
  for (const RunResult& r : runs)
    t.add({r.placement, std::to_string(r.layers), std::to_string(r.parameters), std::to_string(r.steps_run),
           status(r, baseline), r.diverged() ? std::to_string(r.diverged_at) : "", study::fmt(study::mean_of_last(r.train_loss, 20)),
           r.diverged() ? "nan" : study::fmt(r.val_loss.back()), study::fmt(r.token_accuracy),
           study::fmt(r.exact_match), study::fmt(r.seconds, 3)});
  return t;
}

study::Table curves_table(const std::vector<RunResult>& runs) {
  study::Table t({"placement", "layers_per_side", "step", "train_loss", "val_loss", "grad_norm", "lr"});
  for (const RunResult& r : runs) {
    std::size_t v = 0;
    for (std::size_t step = 0; step <= r.train_loss.size(); ++step) {
      const bool has_val = v < r.val_steps.size() && r.val_steps[v] == static_cast<double>(step);
      const bool has_train = step > 0;
      t.add({r.placement, std::to_string(r.layers), std::to_string(step), has_train ? study::fmt(r.train_loss[step - 1], 6) : "",
             has_val ? study::fmt(r.val_loss[v++], 6) : "", has_train ? study::fmt(r.grad_norm[step - 1], 6) : "",
             has_train ? study::fmt(r.lr[step - 1], 6) : ""});
    }
  }
  return t;
}

std::string decodings_markdown(const std::vector<RunResult>& runs) {
  std::ostringstream md;
  for (const RunResult& r : runs) {
    md << "**" << r.placement << ", " << r.layers << " layers per side**";
    if (r.diverged()) {
      md << ": diverged at step " << r.diverged_at << " (" << r.diverged_why << "), not decoded.\n\n";
      continue;
    }
    md << "\n\n";
    study::Table t({"source", "expected", "greedy decoding", "exact"});
    for (const Decoding& e : r.decodings) t.add({e.source, e.expected, e.decoded, e.correct ? "yes" : "no"});
    md << t.markdown() << '\n';
  }
  return md.str();
}

std::string report_markdown(const std::vector<RunResult>& runs, const Settings& s, double baseline, const std::string& timing,
                            const study::Table& summary) {
  const char* scaling = s.b2t_scaling == "off" ? "off, as by default: B2T is the connection alone"
                        : s.b2t_scaling == "b2t" ? "applied to the b2t runs only"
                                                 : "applied to every run";
  std::ostringstream md;
  md << "# Norm placement on a toy translation task\n\n"
     << "A `Seq2SeqTransformer` trained on `TranslationTask` once per placement and depth, with the same seed, "
        "the same batches and the same held-out set. What each column measures:\n\n"
     << "- **final_val_loss**: cross-entropy per target token (EOS included) on " << s.val_size
     << " held-out sentences, teacher-forced; the unigram baseline (target-token frequencies, ignoring the "
        "source) is "
     << study::fmt(baseline) << " nats.\n"
     << "- **token_accuracy**: share of held-out target tokens whose teacher-forced argmax is right.\n"
     << "- **exact_match**: share of held-out sentences whose greedy decoding equals `task.solve(source)` and ends "
        "with EOS. No held-out source appears in any training batch.\n"
     << "- **status**: `diverged at step k` when the loss or a gradient was NaN/Inf at step k (training stopped "
        "there), or the validation loss was; `not below the unigram baseline` when the final validation loss is "
        "not below the baseline; otherwise `trained`.\n"
     << "- **final_train_loss**: mean training loss of the last 20 steps; **seconds**: wall time of the run "
        "(training and evaluation).\n\n"
     << study::setup_section(timing, s,
                             "Initialization `" + s.init + "`; the L^(-1/2) scaling of the block weights (`b2t_scaling`, "
                             "model_init.hpp): " + scaling + " (`--b2t-scaling " + s.b2t_scaling + "`).",
                             training::command_line("translate", arguments(s)))
     << "## Results\n\n"
     << summary.markdown() << "\n"
     << "![validation loss](val_loss.svg)\n\n![training loss](train_loss.svg)\n\n"
     << "## Greedy decodings (first " << s.examples << " held-out sentences)\n\n"
     << decodings_markdown(runs);
  return md.str();
}

}  // namespace

study::Outputs outputs(const std::vector<RunResult>& runs, const Settings& s, double baseline, const std::string& timing) {
  study::Outputs o{summary_table(runs, baseline), curves_table(runs),
                   {"Validation loss (teacher-forced, per target token)", "step", "cross-entropy (nats, log scale)"},
                   {"Training loss (moving average, β = 0.9)", "step", "cross-entropy (nats, log scale)"},
                   ""};
  o.val_loss.log_y = o.train_loss.log_y = true;
  for (const RunResult& r : runs) {  // one colour per placement; every other depth dashed
    const std::string name = run_name(r.placement, r.layers);
    const bool dashed = (std::find(s.layers.begin(), s.layers.end(), r.layers) - s.layers.begin()) % 2 == 1;
    o.val_loss.series.push_back({name, r.val_steps, r.val_loss, dashed});
    o.train_loss.series.push_back(study::loss_curve(name, r.train_loss, 0.9, dashed));
  }
  o.report = report_markdown(runs, s, baseline, timing, o.summary);
  return o;
}

std::vector<std::string> check_outputs(const std::vector<RunResult>& runs, const std::string& out) {
  std::vector<std::string> failures = study::check_outputs_written(out, kSummaryColumns);
  bool any_trained = false;
  for (const RunResult& r : runs) {
    if (r.diverged()) continue;
    any_trained = true;
    const std::string name = run_name(r.placement, r.layers);
    study::check_trained(name, r, r.val_loss.front(), r.val_loss.back(), failures);
    study::check_share(name, "token accuracy", r.token_accuracy, failures);
    study::check_share(name, "exact match", r.exact_match, failures);
  }
  if (!any_trained) failures.push_back("every run diverged");
  return failures;
}

}  // namespace translate
