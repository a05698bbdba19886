// translate/main.cpp — study: does the norm placement decide whether a deep encoder-decoder trains?
//
// A Seq2SeqTransformer learns TranslationTask, a toy language pair (SVO English-like source,
// SOV target with case particles, a plural marker and object agreement), once per placement
// and depth (layers per side), with the same seed, initial weights drawn the same way, the
// same batches and the same held-out set. By default the placements are these three (any
// placement of the registry can be named: --help lists them with their formulas):
//
//   post  y = LN(x + F(x))             the original Transformer; deep stacks are known to be hard
//   pre   y = x + F(LN(x))             trains deep stacks, ends each side with a final LN
//   b2t   post + the block input added before the block's last LN (Takase et al. 2022,
//         arXiv 2206.00330), whose paper compares exactly these three at 6 and 18 layers;
//         --b2t-scaling b2t also scales its block weights by L^(-1/2) at init (off by default)
//
// For each run it measures the validation loss (teacher-forced cross-entropy per target
// token), the token accuracy (teacher-forced argmax), the exact-match accuracy of greedy
// decoding on held-out sentences the training batches never contain, whether training
// diverged, and the wall time. It writes report.md, summary.csv, curves.csv and two loss-curve
// SVGs to --out, and prints a few greedy translations.
//
// Run:   build/examples/translate                        # defaults: a few minutes on 2 cores
//        build/examples/translate --placements pre,deepnorm --layers 12 --lr 5e-4 --steps 800
//        build/examples/translate --placements b2t --layers 6 --b2t-scaling on   # B2T scaled
//        build/examples/translate --smoke --check        # the seconds-long ctest smoke run
// --help lists every setting; report.md repeats the command line that reproduces a run.
//
// The pieces: settings.hpp (every option), run (the data, one run, its scores), report (what is
// written, --check); the frame of main() and the training loop are common/'s (study.hpp, run.hpp).
#include <cstdio>

#include <CLI/CLI.hpp>
#include <tapegrad/tapegrad.hpp>

#include "common/study.hpp"
#include "report.hpp"
#include "run.hpp"
#include "../../cli_checks.hpp"

using namespace tapegrad;
using namespace translate;

namespace {

void add_options(CLI::App& app, Settings& s) {
  std::vector<std::string> placements;  // every registered placement (nn/placement/placement.hpp)
  for (const nn::PlacementInfo& p : nn::placement_registry()) placements.push_back(p.name);
  app.add_option("--placements", s.placements, "comma-separated, from the list below")
      ->delimiter(',')->check(CLI::IsMember(placements));
  app.add_option("--layers", s.layers, "comma-separated depths, layers per side (encoder and decoder)")
      ->delimiter(',')->check(cli::range(1, 256));
  app.add_option("--d-model", s.d_model, "model width")->check(cli::positive);
  app.add_option("--heads", s.heads, "attention heads (must divide d-model)")->check(cli::positive);
  app.add_option("--d-ff", s.d_ff, "feed-forward width (0: 4·d-model)")->check(cli::non_negative);
  app.add_option("--activation", s.activation, "relu, gelu or gelu_tanh")->check(CLI::IsMember({"relu", "gelu", "gelu_tanh"}));
  app.add_option("--dropout", s.dropout, "dropout on sublayer outputs")->check(cli::range(0.0, 0.99));
  app.add_option("--init", s.init, "xavier, gpt2 or pytorch")->check(CLI::IsMember({"xavier", "gpt2", "pytorch"}));
  app.add_option("--b2t-scaling", s.b2t_scaling,
                 "scale the block weights by L^(-1/2) at init: off (the library default), b2t (the b2t runs only) or on (every run)")
      ->check(CLI::IsMember({"off", "b2t", "on"}));
  study::add_training_options(app, s);
  app.add_option("--batch", s.batch, "sentence pairs per step")->check(cli::positive);
  app.add_option("--eval-interval", s.eval_interval, "steps between validation losses")->check(cli::positive);
  app.add_option("--val-size", s.val_size, "held-out sentences (never in a training batch)")->check(cli::range(1, 5000));
  app.add_option("--examples", s.examples, "greedy decodings shown per run")->check(cli::non_negative);
  study::add_machinery_options(app, s, "tiny sizes and a few steps (options given explicitly still apply)",
                               "exit 1 unless the outputs exist, hold finite values and the loss fell");
  app.footer(nn::placement_help() + "translate has no --residual-scale: α is 1 (DeepNorm's comes from the depths).");
}

// --smoke: tiny defaults for every option not given on the command line.
void smoke(const CLI::App& app, Settings& s) {
  study::smoke_training(app, s);
  study::unless_given(app, "--layers", s.layers, std::vector<std::int64_t>{1, 2});
  study::unless_given(app, "--d-model", s.d_model, 16);
  study::unless_given(app, "--heads", s.heads, 2);
  study::unless_given(app, "--batch", s.batch, 16);
  study::unless_given(app, "--eval-interval", s.eval_interval, 10);
  study::unless_given(app, "--val-size", s.val_size, 32);
  study::unless_given(app, "--examples", s.examples, 2);
}

// Every placement at every depth, on the same data; then the outputs.
study::CheckResult run_study(const Settings& s) {
  const TranslationData d(s.val_size, s.seed + 1);
  const double baseline = d.unigram_baseline(s.seed + 2);
  std::printf("translate: %zu placement(s) x %zu depth(s), %lld steps each, batch %lld, d_model %lld; %s\n",
              s.placements.size(), s.layers.size(), static_cast<long long>(s.steps), static_cast<long long>(s.batch),
              static_cast<long long>(s.d_model), study::machine_line().c_str());
  std::printf("vocabulary %lld words, %lld held-out sentences; unigram baseline %.4f nats/token\n",
              static_cast<long long>(d.task.vocab().size()), static_cast<long long>(s.val_size), baseline);

  training::Progress progress(0, stdout);
  for (auto l : s.layers) progress.total += static_cast<double>(l * s.steps) * static_cast<double>(s.placements.size());
  std::vector<RunResult> runs;
  for (auto l : s.layers)
    for (const auto& p : s.placements) {
      runs.push_back(train_one(p, l, d, s, progress));
      const RunResult& r = runs.back();
      if (r.diverged()) continue;  // train_run said where
      char line[160];
      std::snprintf(line, sizeof line, "%s: val loss %.4f, token accuracy %.3f, exact match %.3f, %.1f s",
                    run_name(p, l).c_str(), r.val_loss.back(), r.token_accuracy, r.exact_match, r.seconds);
      progress.line(line);
      for (const Decoding& e : r.decodings)
        std::printf("    %s\n      expected %s\n      greedy   %s  (%s)\n", e.source.c_str(), e.expected.c_str(),
                    e.decoded.c_str(), e.correct ? "exact" : "wrong");
    }

  const std::string timing = progress.timing();
  study::write_outputs(outputs(runs, s, baseline, timing), s.out, timing);
  return {s.check ? check_outputs(runs, s.out) : std::vector<std::string>{}, ""};
}

}  // namespace

int main(int argc, char** argv) {
  Settings s;
  CLI::App app{"Study: Post-LN, Pre-LN and B2T encoder-decoders on a toy translation task, at several depths."};
  add_options(app, s);
  const study::Program program{.name = "translate",
                               .smoke = [&] { smoke(app, s); },
                               .validate = [&] { study::require_heads_divide(s.d_model, s.heads); },
                               .run = [&] { return run_study(s); }};
  return study::run_main(app, argc, argv, s, program);
}
