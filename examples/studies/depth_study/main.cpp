// depth_study/main.cpp — how deep can each residual/norm placement go? For every placement (by
// default no residual, Post-LN, Pre-LN, B2T; any other of the placement registry, and RMSNorm,
// 1/√2-residual and scaled-init variants on request) and every depth, on the same data and seed, it measures at initialization and after a short
// training: the gradient norm of each block (do gradients vanish or explode toward the
// bottom?), the gradient reaching the embeddings, the activation RMS and the cosine between
// consecutive layers (layer collapse); then the loss curves at one learning rate and a small
// learning-rate sweep. Writes report.md, CSV files and SVG charts into --out.
//
//   depth_study                                   # defaults: about ten minutes on 2 cores
//   depth_study --placements post,pre,deepnorm --depths 6,24 --init pytorch
//   depth_study --smoke --check --out /tmp/ds     # seconds; exits non-zero unless the outputs are sane
//
// The pieces: variants (the placements by name), runs (build, measure, train), outputs and
// report_md (what is written), check (--check); the frame of main() is common/study.hpp's.
#include <atomic>
#include <cmath>
#include <csignal>
#include <cstdio>

#include <CLI/CLI.hpp>

#include "common/study.hpp"
#include "check.hpp"
#include "outputs.hpp"

using namespace tapegrad;
using namespace depth_study;

namespace {

std::atomic<bool> interrupted{false};
extern "C" void on_sigint(int) { interrupted = true; }

// --smoke: tiny sizes that finish in seconds, for every setting not given on the command line.
void apply_smoke_sizes(Settings& s, const CLI::App& app) {
  using study::unless_given;
  unless_given(app, "--depths", s.depths, std::vector<std::int64_t>{2, 3});
  unless_given(app, "--d-model", s.shape.d_model, 16);
  unless_given(app, "--heads", s.shape.heads, 2);
  unless_given(app, "--seq-len", s.shape.seq_len, 16);
  unless_given(app, "--batch", s.train.batch, 8);
  unless_given(app, "--steps", s.train.steps, 40);
  unless_given(app, "--warmup", s.train.warmup, 4);
  unless_given(app, "--lr", s.train.lr, 1e-2);
  unless_given(app, "--probe-batch", s.probe_batch, 8);
  unless_given(app, "--eval-batches", s.eval_batches, 2);
  unless_given(app, "--sweep-depth", s.sweep_depth, 2);
  unless_given(app, "--sweep-steps", s.sweep_steps, 10);
  unless_given(app, "--sweep-lrs", s.sweep_lrs, std::vector<double>{3e-3, 3e-2});
  unless_given(app, "--threads", s.threads, 1);
}

// The command that reruns this setup, every setting spelled out (defaults may change).
std::string full_command(const Settings& s) {
  const TrainOptions& t = s.train;
  auto i = [](std::int64_t v) { return std::to_string(v); };
  training::Arguments subject, after;
  if (!s.data.empty()) subject.push_back({"--data", s.data});
  subject.push_back({"--tokenizer", s.tokenizer});
  if (s.tokenizer == "bpe") subject.push_back({"--bpe-vocab", i(s.bpe_vocab)});
  subject.insert(subject.end(), {{"--placements", study::comma_list(s.placements)}, {"--depths", study::comma_list(s.depths)},
                                 {"--init", study::comma_list(s.inits)}, {"--compare-inits", study::comma_list(s.compare_inits)},
                                 {"--d-model", i(s.shape.d_model)}, {"--heads", i(s.shape.heads)},
                                 {"--seq-len", i(s.shape.seq_len)}, {"--batch", i(t.batch)}});
  after = {{"--probe-batch", i(s.probe_batch)}, {"--eval-batches", i(s.eval_batches)}, {"--sweep-depth", i(s.sweep_depth)},
           {"--sweep-steps", i(s.sweep_steps)}};
  if (!s.sweep_lrs.empty()) after.push_back({"--sweep-lrs", study::comma_list(s.sweep_lrs)});
  return training::command_line("depth_study", study::study_arguments(subject, t, after, s));
}

// What a model that ignores the context can reach: the train split's unigram model
// (training::Unigram), its cross-entropy on the train split (close to the train split's unigram
// entropy, the lowest training loss of such a model), on the whole val split, and on the
// validation batches.
void unigram_baselines(const data::TokenStream& stream, const Data& data, SetupInfo& info) {
  training::Unigram unigram(data.vocab_size);
  unigram.add_all(stream.tokens(data::Split::train));
  info.unigram_train = unigram.cross_entropy(stream.tokens(data::Split::train));
  info.unigram_val_split = unigram.cross_entropy(stream.tokens(data::Split::val));
  std::vector<std::int64_t> targets;
  for (const data::Batch& b : data.validation)
    for (auto t : b.targets.to_vector<std::int64_t>()) targets.push_back(t);
  info.unigram_validation = unigram.cross_entropy(targets);
}

// Every setting of Settings as a command-line option.
void add_options(CLI::App& app, Settings& s) {
  TrainOptions& t = s.train;
  const std::vector<std::string> init_names = {"gpt2", "pytorch", "xavier"};
  app.add_option("--data", s.data, "text file to train on (default: the licence texts in /usr/share/common-licenses)");
  app.add_option("--tokenizer", s.tokenizer, "char or bpe")->check(CLI::IsMember({"char", "bpe"}));
  app.add_option("--bpe-vocab", s.bpe_vocab, "vocabulary size of the BPE tokenizer")->check(CLI::Range(257, 65536));
  app.add_option("--placements", s.placements, "comma-separated, from the list below")
      ->delimiter(',')->check(CLI::IsMember(variant_names()));
  app.add_option("--depths", s.depths, "comma-separated numbers of blocks")->delimiter(',')->check(CLI::Range(1, 1024));
  app.add_option("--init", s.inits, "init of the trained runs, comma-separated: gpt2, pytorch, xavier")
      ->delimiter(',')->check(CLI::IsMember(init_names));
  app.add_option("--compare-inits", s.compare_inits, "inits also measured at initialization only (no training); '' for none")
      ->delimiter(',')->check(CLI::IsMember(init_names) | CLI::IsMember({""}));
  app.add_option("--d-model", s.shape.d_model, "model width")->check(CLI::PositiveNumber);
  app.add_option("--heads", s.shape.heads, "attention heads (must divide --d-model)")->check(CLI::PositiveNumber);
  app.add_option("--seq-len", s.shape.seq_len, "context length T")->check(CLI::PositiveNumber);
  app.add_option("--batch", t.batch, "sequences per training step")->check(CLI::PositiveNumber);
  study::add_training_options(app, t);
  app.add_option("--probe-batch", s.probe_batch, "validation windows of the probe batch the snapshots are measured on")
      ->check(CLI::PositiveNumber);
  app.add_option("--eval-batches", s.eval_batches, "validation batches (of --batch windows) for the validation loss")
      ->check(CLI::PositiveNumber);
  app.add_option("--sweep-depth", s.sweep_depth, "depth of the learning-rate sweep")->check(CLI::Range(1, 1024));
  app.add_option("--sweep-steps", s.sweep_steps, "training steps of each sweep run (0: no sweep)")->check(CLI::NonNegativeNumber);
  app.add_option("--sweep-lrs", s.sweep_lrs, "comma-separated learning rates of the sweep")->delimiter(',')->check(CLI::PositiveNumber);
  study::add_machinery_options(app, s, "tiny sizes (depths 2,3, d_model 16, 40 steps) for any size not given: a few seconds",
                               "exit non-zero unless the outputs exist and hold sane values, and Pre-LN's loss fell");
  app.footer(variant_help());
}

// Settles the settings that follow from others; throws on those that cannot run.
void validate(Settings& s) {
  std::erase(s.compare_inits, std::string());
  if (s.sweep_steps == 0) s.sweep_lrs.clear();
  study::require_heads_divide(s.shape.d_model, s.shape.heads);
}

// The runs of the plan (trained, the sweep, at initialization only), then the outputs.
study::CheckResult run_study(Settings& s, const std::string& invoked) {
  TrainOptions& t = s.train;
  std::signal(SIGINT, on_sigint);
  SetupInfo info;
  info.command = full_command(s) + "\n# as invoked: " + invoked;
  info.threads = get_num_threads();

  // ---- data: the same tokens, probe batch and validation batches for every run
  const data::Corpus corpus = s.data.empty() ? data::Corpus::default_corpus() : data::Corpus::from_files({s.data});
  std::unique_ptr<data::Tokenizer> tokenizer;
  if (s.tokenizer == "bpe")
    tokenizer = std::make_unique<data::BpeTokenizer>(data::BpeTokenizer::train(corpus.texts(), s.bpe_vocab));
  else
    tokenizer = std::make_unique<data::CharTokenizer>(data::CharTokenizer::from_texts(corpus.texts()));
  const data::TokenStream stream(corpus, *tokenizer, 0.1);
  const std::int64_t V = tokenizer->vocab_size();
  const Data data = make_data(stream, V, s.probe_batch, s.eval_batches, t.batch, s.shape.seq_len);
  t.seq_len = s.shape.seq_len;
  t.batch_seed = s.seed ^ 0x5eedULL;
  info.data = std::to_string(corpus.names().size()) + " file(s), " + std::to_string(corpus.num_bytes()) + " bytes" +
              (s.data.empty() ? " (the default corpus: the licence texts of /usr/share/common-licenses)" : ": " + s.data);
  info.tokenizer = tokenizer->name();
  info.vocab_size = V;
  info.train_tokens = stream.size(data::Split::train);
  info.val_tokens = stream.size(data::Split::val);
  unigram_baselines(stream, data, info);
  std::printf("data: %s; %s tokenizer, %lld tokens; %lld train / %lld val tokens; unigram cross-entropy %.4f (train), "
              "%.4f (validation batches) nats/token\n",
              info.data.c_str(), info.tokenizer.c_str(), static_cast<long long>(V), static_cast<long long>(info.train_tokens),
              static_cast<long long>(info.val_tokens), info.unigram_train, info.unigram_validation);
  std::printf("rerun with: %s\n", full_command(s).c_str());

  // ---- the plan, and its cost in units of (depth + 1) × steps
  const double probe_cost = 1.0 + 2.0 * static_cast<double>(s.probe_batch) / static_cast<double>(t.batch);
  training::Progress progress(0);
  info.load_start = progress.load_at_start;
  for (const auto& init : s.all_inits())
    for (auto depth : s.depths)
      progress.total += static_cast<double>(s.placements.size() * (depth + 1)) *
                        (s.is_trained(init) ? static_cast<double>(t.steps) + 2 * probe_cost + s.eval_batches : probe_cost);
  progress.total += static_cast<double>(s.placements.size() * s.sweep_lrs.size() * (s.sweep_depth + 1)) *
                    static_cast<double>(s.sweep_steps + s.eval_batches);
  const std::size_t n_runs = s.all_inits().size() * s.depths.size() * s.placements.size();
  const std::size_t n_trained = s.inits.size() * s.depths.size() * s.placements.size();
  std::printf("plan: %zu trained runs of %lld steps, %zu measured at initialization only, %zu sweep runs of %lld steps\n",
              n_trained, static_cast<long long>(t.steps), n_runs - n_trained, s.placements.size() * s.sweep_lrs.size(),
              static_cast<long long>(s.sweep_steps));
  std::fflush(stdout);

  std::vector<RunRecord> runs;
  double worst_mismatch = 0;
  auto train_with_progress = [&](nn::TransformerLM& model, const TrainOptions& o, std::int64_t depth, const std::string& what) {
    return train(model, data, o, [&](std::int64_t step, double loss) {
      progress.done += static_cast<double>(depth + 1);
      char line[200];
      std::snprintf(line, sizeof line, "%s  step %lld/%lld  loss %.4f", what.c_str(), static_cast<long long>(step),
                    static_cast<long long>(o.steps), loss);
      progress.show(line);
      return !interrupted;
    });
  };
  auto run_init = [&](const std::string& init) {
    for (std::int64_t depth : s.depths)
      for (const std::string& name : s.placements) {
        if (interrupted) return;
        RunRecord r;
        r.init = init;
        r.variant = &variant_from_name(name);
        r.depth = depth;
        const std::string what = "run " + std::to_string(runs.size() + 1) + "/" + std::to_string(n_runs) + " " +
                                 r.variant->label + " L=" + std::to_string(depth) + " init " + init;
        auto model = build_model(*r.variant, depth, init, s.shape, V, s.seed);
        r.parameters = model->num_parameters();
        if (s.check) worst_mismatch = std::max(worst_mismatch, probe_forward_mismatch(*model, data.probe));
        r.at_init = measure(*model, data.probe);
        progress.done += static_cast<double>(depth + 1) * probe_cost;
        r.trained = s.is_trained(init);
        std::string summary = what + ": at init ‖∇ block 1‖/‖∇ block L‖ " + study::fmt(bottom_to_top_ratio(r.at_init), 3);
        if (r.trained) {
          r.train = train_with_progress(*model, t, depth, what);
          if (r.train.interrupted) return;
          progress.done += static_cast<double>((depth + 1) * s.eval_batches);
          if (r.train.status != "non-finite") {
            r.after = measure(*model, data.probe);
            r.has_after = true;
            progress.done += static_cast<double>(depth + 1) * probe_cost;
          }
          summary += ", loss " + study::fmt(r.train.initial_loss) + " -> " + study::fmt(r.train.final_loss) + ", val " +
                     study::fmt(r.train.val_loss) + " (" + r.train.status + ")";
        }
        progress.line(summary);
        runs.push_back(std::move(r));
      }
  };
  // The trained runs, the sweep, then the quick at-initialization comparisons.
  for (const std::string& init : s.inits) run_init(init);
  std::vector<SweepRecord> sweep;
  for (const std::string& name : s.placements)
    for (double lr : s.sweep_lrs) {
      if (interrupted) break;
      SweepRecord w{s.inits.front(), &variant_from_name(name), s.sweep_depth, lr, {}};
      auto model = build_model(*w.variant, w.depth, w.init, s.shape, V, s.seed);
      TrainOptions o = t;
      o.steps = s.sweep_steps;
      o.lr = lr;
      const std::string what = "sweep " + std::to_string(sweep.size() + 1) + "/" +
                               std::to_string(s.placements.size() * s.sweep_lrs.size()) + " " + w.variant->label +
                               " L=" + std::to_string(w.depth) + " lr " + study::fmt(lr);
      w.train = train_with_progress(*model, o, w.depth, what);
      if (w.train.interrupted) break;
      progress.done += static_cast<double>((w.depth + 1) * s.eval_batches);
      progress.line(what + ": val " + study::fmt(w.train.val_loss) + " (" + w.train.status + ")");
      sweep.push_back(std::move(w));
    }
  for (const std::string& init : s.all_inits())
    if (!s.is_trained(init)) run_init(init);
  if (interrupted) throw study::Interrupted("interrupted: nothing written (files of earlier runs in " + s.out + " are untouched)");

  // ---- outputs
  info.seconds = progress.elapsed();
  info.load_end = training::load_average();
  const std::vector<std::string> written = write_outputs(s.out, s, info, runs, sweep);
  std::printf("wrote %zu files into %s: report.md, %zu CSV files, %zu SVG charts\n", written.size(), s.out.c_str(),
              csv_specs().size(), written.size() - csv_specs().size() - 1);
  std::printf("total time %s (%.1f s) on %d thread(s); load average at the start %s, at the end %s\n",
              training::clock_str(info.seconds).c_str(), info.seconds, info.threads, info.load_start.c_str(),
              info.load_end.c_str());
  if (!s.check) return {};
  std::vector<std::string> problems = check_outputs(s.out, written, s);
  if (worst_mismatch > 1e-4)
    problems.push_back("the probe forward pass differs from TransformerLM::forward by " + study::fmt(worst_mismatch));
  return {problems, "depth_study: all checks passed (" + std::to_string(written.size()) +
                        " files, probe forward matches the model's to " + study::fmt(worst_mismatch, 2) + ")"};
}

}  // namespace

int main(int argc, char** argv) {
  Settings s;
  CLI::App app{"Gradients, activations, layer collapse and training of transformer LMs by norm placement and depth. "
               "Writes report.md, CSV files and SVG charts into --out."};
  add_options(app, s);
  const std::string invoked = training::invoked_command("depth_study", argc, argv);
  const study::Program program{.name = "depth_study",
                               .smoke = [&] { apply_smoke_sizes(s, app); },
                               .validate = [&] { validate(s); },
                               .run = [&] { return run_study(s, invoked); }};
  return study::run_main(app, argc, argv, s, program);
}
