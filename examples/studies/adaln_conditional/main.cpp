// adaln_conditional/main.cpp — study: two ways to tell one model which task to do.
//
// One decoder-only TransformerLM learns several symbol tasks at once (by default copy,
// reverse and sort over the same symbols), each row of a batch drawn from a random task.
// The rows look alike (BOS source SEP answer EOS), so the model must be told the task:
//
//   adaln_zero   the task id is a condition c = cond_emb[task]; every norm is AdaLN-Zero
//                (Peebles & Xie 2023): shift, scale, gate = Linear(SiLU(c)), zero at init,
//                h = x + gate ⊙ F(LN(x)·(1 + scale) + shift): every block starts as the identity
//   task_token   plain LayerNorm (Pre-LN); the task is one more token before the source,
//                BOS <task> source SEP answer EOS, with one new embedding row per task
//
// Both have the same width, depth, data (the same rows in the same order), seed and steps.
// Per variant and task it measures the validation loss on the answer tokens (EOS included),
// the token accuracy and the exact-match accuracy, both from the argmax under teacher forcing.
// A row is an exact match when every answer token and the EOS are the argmax: that is the
// same event as greedy decoding writing the whole answer and stopping, since each greedy step
// then sees exactly the teacher-forced prefix. It writes report.md, summary.csv, curves.csv
// and loss-curve SVGs to --out, and prints a few greedy generations per task.
//
// Run:   build/examples/adaln_conditional                  # defaults: a few minutes on 2 cores
//        build/examples/adaln_conditional --tasks copy,sort --layers 4 --steps 2000
//        build/examples/adaln_conditional --smoke --check  # the seconds-long ctest smoke run
// --help lists every setting; report.md repeats the command line that reproduces a run.
//
// The pieces: settings.hpp (every option), run (the task mix, the variants, one run, its
// scores), report (what is written, --check); the frame of main() and the training loop are
// common/'s (study.hpp, run.hpp).
#include <cstdio>

#include <CLI/CLI.hpp>
#include <tapegrad/tapegrad.hpp>

#include "common/study.hpp"
#include "report.hpp"
#include "run.hpp"
#include "../../cli_checks.hpp"

using namespace tapegrad;
using namespace adaln_conditional;

namespace {

void add_options(CLI::App& app, Settings& s) {
  app.add_option("--tasks", s.tasks, "comma-separated tasks, one class each: copy, reverse, sort")
      ->delimiter(',')->check(CLI::IsMember({"copy", "reverse", "sort"}));
  app.add_option("--symbols", s.symbols, "distinct symbols in the sequences")->check(cli::range(2, 1000));
  app.add_option("--min-len", s.min_len, "shortest source")->check(cli::positive);
  app.add_option("--max-len", s.max_len, "longest source")->check(cli::positive);
  app.add_option("--layers", s.layers, "transformer blocks")->check(cli::range(1, 256));
  app.add_option("--d-model", s.d_model, "model width")->check(cli::positive);
  app.add_option("--heads", s.heads, "attention heads (must divide d-model)")->check(cli::positive);
  app.add_option("--init", s.init, "gpt2, pytorch or xavier")->check(CLI::IsMember({"gpt2", "pytorch", "xavier"}));
  study::add_training_options(app, s);
  app.add_option("--batch", s.batch, "rows per step")->check(cli::positive);
  app.add_option("--eval-interval", s.eval_interval, "steps between validation losses")->check(cli::positive);
  app.add_option("--val-per-task", s.val_per_task, "held-out rows per task")->check(cli::range(1, 5000));
  app.add_option("--examples", s.examples, "greedy generations shown per task and variant")->check(cli::non_negative);
  study::add_machinery_options(app, s, "tiny sizes and a few steps (options given explicitly still apply)",
                               "exit 1 unless the outputs exist, hold finite values and the loss fell");
}

// --smoke: tiny defaults for every option not given on the command line.
void smoke(const CLI::App& app, Settings& s) {
  study::smoke_training(app, s);
  study::unless_given(app, "--symbols", s.symbols, 4);
  study::unless_given(app, "--max-len", s.max_len, 4);
  study::unless_given(app, "--layers", s.layers, 1);
  study::unless_given(app, "--d-model", s.d_model, 16);
  study::unless_given(app, "--heads", s.heads, 2);
  study::unless_given(app, "--batch", s.batch, 16);
  study::unless_given(app, "--eval-interval", s.eval_interval, 10);
  study::unless_given(app, "--val-per-task", s.val_per_task, 16);
  study::unless_given(app, "--examples", s.examples, 1);
}

void validate(const Settings& s) {
  if (s.min_len > s.max_len)
    throw ValueError("--min-len " + std::to_string(s.min_len) + " is above --max-len " + std::to_string(s.max_len));
  study::require_heads_divide(s.d_model, s.heads);
}

// Both variants on the same rows; then the outputs.
study::CheckResult run_study(const Settings& s) {
  const TaskMix mix(s);
  const HeldOut val = held_out(mix, s.val_per_task, s.seed + 1);
  std::printf("adaln_conditional: tasks %s over %lld symbols, lengths %lld..%lld; %lld layers, d_model %lld, %lld "
              "steps per variant, batch %lld; %s\n",
              study::join(s.tasks).c_str(), static_cast<long long>(s.symbols), static_cast<long long>(s.min_len),
              static_cast<long long>(s.max_len), static_cast<long long>(s.layers), static_cast<long long>(s.d_model),
              static_cast<long long>(s.steps), static_cast<long long>(s.batch), study::machine_line().c_str());

  const std::vector<Variant> variants = {{"adaln_zero", true}, {"task_token", false}};
  training::Progress progress(static_cast<double>(variants.size() * s.steps), stdout);  // in steps
  std::vector<RunResult> runs;
  for (const Variant& v : variants) {
    runs.push_back(train_one(v, mix, val, s, progress));
    const RunResult& r = runs.back();
    if (r.diverged()) continue;  // train_run said where
    progress.line(v.name + ": " + std::to_string(r.parameters) + " parameters, " + study::fmt(r.seconds, 3) + " s");
    for (std::int64_t t = 0; t < mix.size(); ++t)
      std::printf("    %-8s val loss %.4f  token accuracy %.3f  exact match %.3f\n", mix.tasks[t]->name().c_str(),
                  r.final_eval[t].loss, r.final_eval[t].token_accuracy, r.final_eval[t].exact_match);
    for (const Generation& g : r.generations)
      std::printf("    [%s] %s -> %s  (expected %s, %s)\n", g.task.c_str(), g.source.c_str(), g.generated.c_str(),
                  g.expected.c_str(), g.correct ? "exact" : "wrong");
  }

  const std::string timing = progress.timing();
  study::write_outputs(outputs(runs, mix, s, timing), s.out, timing);
  return {s.check ? check_outputs(runs, s.out) : std::vector<std::string>{}, ""};
}

}  // namespace

int main(int argc, char** argv) {
  Settings s;
  CLI::App app{"Study: one transformer for several tasks, told the task by AdaLN-Zero conditioning or by a task token."};
  add_options(app, s);
  const study::Program program{.name = "adaln_conditional",
                               .smoke = [&] { smoke(app, s); },
                               .validate = [&] { validate(s); },
                               .run = [&] { return run_study(s); }};
  return study::run_main(app, argc, argv, s, program);
}
