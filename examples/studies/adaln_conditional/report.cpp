// report.cpp — adaln_conditional's tables, charts, report.md and --check.
#include "report.hpp"

#include <sstream>

namespace adaln_conditional {

using namespace tapegrad;

training::Arguments arguments(const Settings& s) {
  auto i = [](std::int64_t v) { return std::to_string(v); };
  return study::study_arguments({{"--tasks", study::comma_list(s.tasks)}, {"--symbols", i(s.symbols)}, {"--min-len", i(s.min_len)},
                                  {"--max-len", i(s.max_len)}, {"--layers", i(s.layers)}, {"--d-model", i(s.d_model)},
                                  {"--heads", i(s.heads)}, {"--init", s.init}},
                                 s,
                                 {{"--batch", i(s.batch)}, {"--eval-interval", i(s.eval_interval)},
                                  {"--val-per-task", i(s.val_per_task)}, {"--examples", i(s.examples)}},
                                 s);
}

namespace {

const std::vector<std::string> kSummaryColumns = {"variant", "task", "parameters", "steps_run", "diverged_at_step",
                                                  "final_train_loss", "val_loss", "token_accuracy", "exact_match",
                                                  "seconds"};

// One row per variant and task, then the variant's mean over tasks ("all"; nan if it diverged).
study::Table summary_table(const std::vector<RunResult>& runs, const TaskMix& mix) {
  study::Table t(kSummaryColumns);
  for (const RunResult& r : runs) {
    auto add = [&](const std::string& task, const TaskEval& e) {
      t.add({r.variant.name, task, std::to_string(r.parameters), std::to_string(r.steps_run),
             r.diverged() ? std::to_string(r.diverged_at) : "", study::fmt(study::mean_of_last(r.train_loss, 20)),
             study::fmt(e.loss), study::fmt(e.token_accuracy), study::fmt(e.exact_match), study::fmt(r.seconds, 3)});
    };
    const double n = static_cast<double>(mix.size());
    TaskEval mean{0, 0, 0};
    for (std::int64_t k = 0; k < mix.size(); ++k) {
      const TaskEval e = r.diverged() ? TaskEval{} : r.final_eval[k];
      add(mix.tasks[k]->name(), e);
      mean = {mean.loss + e.loss / n, mean.token_accuracy + e.token_accuracy / n, mean.exact_match + e.exact_match / n};
    }
    add("all", mean);
  }
  return t;
}

study::Table curves_table(const std::vector<RunResult>& runs, const TaskMix& mix) {
  std::vector<std::string> columns = {"variant", "step", "train_loss"};
  for (const auto& task : mix.tasks) columns.push_back("val_loss_" + task->name());
  study::Table t(columns);
  for (const RunResult& r : runs) {
    std::size_t v = 0;
    for (std::size_t step = 0; step <= r.train_loss.size(); ++step) {
      std::vector<std::string> row = {r.variant.name, std::to_string(step),
                                      step > 0 ? study::fmt(r.train_loss[step - 1], 6) : ""};
      const bool has_val = v < r.val_steps.size() && r.val_steps[v] == static_cast<double>(step);
      for (std::int64_t k = 0; k < mix.size(); ++k) row.push_back(has_val ? study::fmt(r.val_loss[v][k], 6) : "");
      v += has_val;
      t.add(std::move(row));
    }
  }
  return t;
}

std::string generations_markdown(const std::vector<RunResult>& runs) {
  std::ostringstream md;
  for (const RunResult& r : runs) {
    md << "**" << r.variant.name << "**";
    if (r.diverged()) {
      md << ": diverged at step " << r.diverged_at << " (" << r.diverged_why << "), not generated.\n\n";
      continue;
    }
    study::Table t({"task", "source", "expected", "generated", "exact"});
    for (const Generation& g : r.generations) t.add({g.task, g.source, g.expected, g.generated, g.correct ? "yes" : "no"});
    md << "\n\n" << t.markdown() << '\n';
  }
  return md.str();
}

std::string report_markdown(const std::vector<RunResult>& runs, const Settings& s, const std::string& timing,
                            const study::Table& summary) {
  std::ostringstream md;
  md << "# One model, several tasks: AdaLN-Zero conditioning vs a task token\n\n"
     << "A decoder-only `TransformerLM` (" << s.layers << " layers, d_model " << s.d_model
     << ", Pre-LN) trained on a mix of the tasks " << study::join(s.tasks) << " over " << s.symbols << " symbols, lengths "
     << s.min_len << ".." << s.max_len << ", each row from a random task. Rows are `BOS source SEP answer EOS`.\n\n"
     << "- **adaln_zero**: every norm is AdaLN-Zero, conditioned on the task id (`forward(tokens, classes)`).\n"
     << "- **task_token**: plain LayerNorm; the task is a token before the source: `BOS <task> source SEP answer "
        "EOS`.\n\n"
     << "Both variants see the same rows in the same order, with the same seed and steps. What each column "
        "measures, on "
     << s.val_per_task << " held-out rows per task (drawn from another seed; short sequences may also occur in "
        "training):\n\n"
     << "- **val_loss**: cross-entropy per answer token (EOS included), teacher-forced.\n"
     << "- **token_accuracy**: share of answer tokens (and EOS) whose teacher-forced argmax is right.\n"
     << "- **exact_match**: share of rows whose answer tokens and EOS are all the teacher-forced argmax; the same "
        "event as greedy decoding producing the exact answer and stopping.\n"
     << "- **task `all`**: the mean over tasks; **final_train_loss**: mean training loss of the last 20 steps "
        "(all tasks); **parameters**: the model's parameter count; **diverged_at_step**: the step whose loss or "
        "a gradient was NaN/Inf (training stopped there), empty if none; **seconds**: wall time of the run.\n\n"
     << study::setup_section(timing, s, "Initialization `" + s.init + "`.",
                             training::command_line("adaln_conditional", arguments(s)))
     << "## Results\n\n"
     << summary.markdown() << "\n"
     << "![validation loss per task](val_loss.svg)\n\n![training loss](train_loss.svg)\n\n"
     << "## Greedy generations (first " << s.examples << " held-out rows per task)\n\n"
     << generations_markdown(runs);
  return md.str();
}

}  // namespace

study::Outputs outputs(const std::vector<RunResult>& runs, const TaskMix& mix, const Settings& s, const std::string& timing) {
  study::Outputs o{summary_table(runs, mix), curves_table(runs, mix),
                   {"Validation loss on the answer tokens, per task", "step", "cross-entropy (nats, log scale)"},
                   {"Training loss (moving average, β = 0.9)", "step", "cross-entropy (nats, log scale)"},
                   ""};
  o.val_loss.log_y = o.train_loss.log_y = true;
  for (std::size_t i = 0; i < runs.size(); ++i) {  // one colour per task; the first variant solid, the second dashed
    const RunResult& r = runs[i];
    const bool dashed = i % 2 == 1;
    for (std::int64_t k = 0; k < mix.size(); ++k) {
      study::Series series{r.variant.name + " " + mix.tasks[k]->name(), r.val_steps, {}, dashed};
      for (const auto& losses : r.val_loss) series.y.push_back(losses[k]);
      o.val_loss.series.push_back(std::move(series));
    }
    o.train_loss.series.push_back(study::loss_curve(r.variant.name, r.train_loss, 0.9, dashed));
  }
  o.report = report_markdown(runs, s, timing, o.summary);
  return o;
}

std::vector<std::string> check_outputs(const std::vector<RunResult>& runs, const std::string& out) {
  std::vector<std::string> failures = study::check_outputs_written(out, kSummaryColumns);
  for (const RunResult& r : runs) {
    const std::string& name = r.variant.name;
    if (r.diverged()) {
      failures.push_back(name + ": diverged at step " + std::to_string(r.diverged_at));
      continue;
    }
    study::check_trained(name, r, study::mean(r.val_loss.front()), study::mean(r.val_loss.back()), failures);
    for (const TaskEval& e : r.final_eval) {
      if (!std::isfinite(e.loss)) failures.push_back(name + ": non-finite validation loss");
      study::check_share(name, "token accuracy", e.token_accuracy, failures);
      study::check_share(name, "exact match", e.exact_match, failures);
    }
  }
  return failures;
}

}  // namespace adaln_conditional
