// depth_study/program.cpp — the depth study's program (main.cpp calls it; a program with a
// placement or stream scheme of its own registers it and calls it too: program.hpp): the claims
// that articles make about residual connections and normalization in deep transformers, each
// tested on this machine. For every placement (no residual, Post-LN, Pre-LN, B2T, DeepNorm,
// Peri-LN, Mix-LN, LayerNorm Scaling, LLaMA-style and more), stream scheme, depth (up to 128
// blocks), learning rate and seed it measures gradients at initialization, trains, counts what
// diverged or never left the unigram plateau, measures how alike consecutive layers are and
// what skipping each block costs, reads the logit lens, trains examples/translate's
// encoder-decoders, and runs a subset again in PyTorch. report.html and report.md give a
// verdict per claim (claims.hpp) with intervals over the seeds.
//
//   depth_study                                   # defaults: about half an hour on 2 cores
//   depth_study --full                            # the complete study (docs/depth-study.md)
//   depth_study --placements post,pre --depths 6,24 --setups untied:xavier:15,tied:gpt2:15
//   depth_study --smoke --check --out /tmp/ds     # seconds; exits non-zero unless the outputs are sane
//
// The pieces: variants (the placements by name), runs (build, measure, train one model),
// stages (every run of the study), claims (the verdicts and the report), outputs (the files),
// check (--check), torch_twin (the PyTorch runs); the frame of the program is common/study.hpp's.
#include "program.hpp"

#include <cstdio>
#include <thread>

#include <CLI/CLI.hpp>

#include "common/study.hpp"
#include "check.hpp"
#include "outputs.hpp"
#include "ranks.hpp"
#include "../../cli_checks.hpp"

using namespace tapegrad;
using namespace depth_study;

namespace {

// --smoke: tiny sizes that finish in seconds, for every setting not given on the command line.
void apply_smoke_sizes(Settings& s, const CLI::App& app) {
  using study::unless_given;
  unless_given(app, "--seeds", s.seeds, std::vector<std::uint64_t>{1, 2});
  unless_given(app, "--d-model", s.shape.d_model, 16);
  unless_given(app, "--heads", s.shape.heads, 2);
  unless_given(app, "--seq-len", s.shape.seq_len, 16);
  unless_given(app, "--batch", s.train.batch, 8);
  unless_given(app, "--steps", s.train.steps, 30);
  unless_given(app, "--warmup", s.train.warmup, 4);
  unless_given(app, "--lr", s.train.lr, 1e-2);
  unless_given(app, "--probe-batch", s.probe_batch, 8);
  unless_given(app, "--eval-batches", s.eval_batches, 2);
  unless_given(app, "--profile-placements", s.profile_placements, std::vector<std::string>{"none", "post", "pre", "pre-scaled"});
  unless_given(app, "--profile-depths", s.profile_depths, std::vector<std::int64_t>{2, 4});
  unless_given(app, "--profile-inits", s.profile_inits, std::vector<std::string>{"pytorch"});
  unless_given(app, "--profile-init-placements", s.profile_init_placements, std::vector<std::string>{"post"});
  unless_given(app, "--placements", s.placements, std::vector<std::string>{"none", "post", "pre", "b2t", "lns"});
  unless_given(app, "--depths", s.depths, std::vector<std::int64_t>{2, 3});
  unless_given(app, "--lrs", s.lrs, std::vector<double>{1e-2});
  unless_given(app, "--deep-placements", s.deep_placements, std::vector<std::string>{"pre"});
  unless_given(app, "--deep-depths", s.deep_depths, std::vector<std::int64_t>{6});
  unless_given(app, "--deep-lr", s.deep_lr, 1e-2);
  unless_given(app, "--skip-depth", s.skip_depth, 3);
  unless_given(app, "--lr-placements", s.lr_placements, std::vector<std::string>{"post", "pre"});
  unless_given(app, "--lr-depth", s.lr_depth, 2);
  unless_given(app, "--lr-sweep", s.lr_sweep, std::vector<double>{3e-3, 1e-2, 3e-2});
  unless_given(app, "--setup-placements", s.setup_placements, std::vector<std::string>{"post", "pre"});
  unless_given(app, "--setup-depth", s.setup_depth, 2);
  unless_given(app, "--setups", s.setups, std::vector<std::string>{"untied:gpt2-unscaled:4", "tied:gpt2:4"});
  unless_given(app, "--budget-fractions", s.budget_fractions, std::vector<double>{0.5});
  unless_given(app, "--budget-placements", s.budget_placements, std::vector<std::string>{"post", "pre"});
  unless_given(app, "--translate-layers", s.translate_layers, std::vector<std::int64_t>{1});
  unless_given(app, "--translate-steps", s.translate_steps, 10);
  unless_given(app, "--translate-d-model", s.translate_d_model, 16);
  unless_given(app, "--torch-depth", s.torch_depth, 2);
  unless_given(app, "--transfer-depths", s.transfer_depths, std::vector<std::int64_t>{2, 3});
  unless_given(app, "--transfer-lrs", s.transfer_lrs, std::vector<double>{3e-3, 1e-2});
  unless_given(app, "--norm-free-placements", s.norm_free_placements, std::vector<std::string>{"dyt"});
  unless_given(app, "--norm-free-budgets", s.norm_free_budgets, std::vector<double>{0.5, 1});
  unless_given(app, "--scheme-depth", s.scheme_depth, 2);
  unless_given(app, "--hc-depths", s.hc_depths, std::vector<std::int64_t>{2});
  unless_given(app, "--lens-depth", s.lens_depth, 3);
  if (app.count("--torch") == 0) s.torch = false;
  unless_given(app, "--jobs", s.jobs, 1);
  unless_given(app, "--threads", s.threads, 1);
}

// --full: the larger study, for every setting not given on the command line: d_model 64,
// 4,000 steps (2,048,000 tokens a run, 10× the default), 5 seeds. A block-step costs about
// 2.5 ms at d_model 64 on one core, so a run of L blocks costs about 10·L seconds; the plan
// below is 1.07e7 block-steps (7 placements at 6 and 24 blocks, Pre-LN and LLaMA at 128, the
// lr sweep, Peri-LN's setups), about 4 hours on 2 cores. docs/depth-study.md says what it
// leaves to a larger machine: every placement at every depth to 128 would cost 4 times as much.
void apply_full_sizes(Settings& s, const CLI::App& app) {
  using study::unless_given;
  unless_given(app, "--d-model", s.shape.d_model, 64);
  unless_given(app, "--steps", s.train.steps, 4000);
  unless_given(app, "--warmup", s.train.warmup, 200);
  unless_given(app, "--depths", s.depths, std::vector<std::int64_t>{6, 24});
  unless_given(app, "--deep-placements", s.deep_placements, std::vector<std::string>{"pre", "llama"});
  unless_given(app, "--deep-depths", s.deep_depths, std::vector<std::int64_t>{128});
  unless_given(app, "--deep-lr", s.deep_lr, 1e-3);
  unless_given(app, "--skip-depth", s.skip_depth, 24);
  unless_given(app, "--lr-sweep", s.lr_sweep, std::vector<double>{5e-4, 1e-3, 2e-3, 4e-3, 8e-3});
  unless_given(app, "--seeds", s.seeds, std::vector<std::uint64_t>{1, 2, 3, 4, 5});
  unless_given(app, "--setups", s.setups, std::vector<std::string>{"untied:gpt2-unscaled:200", "untied:gpt2:200",
                                                                   "untied:gpt2-unscaled:800"});
  unless_given(app, "--setup-placements", s.setup_placements, std::vector<std::string>{"peri"});
  unless_given(app, "--budget-fractions", s.budget_fractions, std::vector<double>{});
  unless_given(app, "--translate-steps", s.translate_steps, 300);
  unless_given(app, "--translate-d-model", s.translate_d_model, 64);
  unless_given(app, "--profile-placements", s.profile_placements, variant_names());
  // the residual stream's claims at the full budget (docs/depth-study.md gives their cost)
  unless_given(app, "--transfer-depths", s.transfer_depths, std::vector<std::int64_t>{2, 16});
  unless_given(app, "--transfer-lrs", s.transfer_lrs, std::vector<double>{1e-3, 3e-3, 1e-2, 3e-2});
  unless_given(app, "--norm-free-budgets", s.norm_free_budgets, std::vector<double>{0.1, 1});
  unless_given(app, "--lens-depth", s.lens_depth, 24);
  // The twin at 4,000 steps would take PyTorch about 15 minutes a placement on one thread; the
  // default run's twin is the cross-check (--torch on brings it back).
  if (app.count("--torch") == 0) s.torch = false;
}

// The command that reruns this setup, every setting spelled out (defaults may change).
std::string full_command(const Settings& s) {
  using study::comma_list;
  const TrainOptions& t = s.train;
  auto i = [](std::int64_t v) { return std::to_string(v); };
  training::Arguments subject, after;
  if (!s.data.empty()) subject.push_back({"--data", s.data});
  subject.push_back({"--tokenizer", s.tokenizer});
  if (s.tokenizer == "bpe") subject.push_back({"--bpe-vocab", i(s.bpe_vocab)});
  subject.insert(subject.end(),
                 {{"--seeds", comma_list(s.seeds)}, {"--d-model", i(s.shape.d_model)}, {"--heads", i(s.shape.heads)},
                  {"--seq-len", i(s.shape.seq_len)}, {"--init", s.setup.init}, {"--head", s.setup.tied_head ? "tied" : "untied"},
                  {"--batch", i(t.batch)}});
  after = {{"--probe-batch", i(s.probe_batch)},
           {"--eval-batches", i(s.eval_batches)},
           {"--plateau-margin", study::fmt(s.plateau_margin, 6)},
           {"--profile-placements", comma_list(s.profile_placements)},
           {"--profile-depths", comma_list(s.profile_depths)},
           {"--profile-inits", comma_list(s.profile_inits)},
           {"--profile-init-placements", comma_list(s.profile_init_placements)},
           {"--placements", comma_list(s.placements)},
           {"--depths", comma_list(s.depths)},
           {"--lrs", comma_list(s.lrs)},
           {"--deep-placements", comma_list(s.deep_placements)},
           {"--deep-depths", comma_list(s.deep_depths)},
           {"--deep-lr", study::fmt(s.deep_lr, 6)},
           {"--checkpoint-from", i(s.checkpoint_from)},
           {"--skip-depth", i(s.skip_depth)},
           {"--skip-threshold", study::fmt(s.skip_threshold, 6)},
           {"--lr-placements", comma_list(s.lr_placements)},
           {"--lr-depth", i(s.lr_depth)},
           {"--lr-sweep", comma_list(s.lr_sweep)},
           {"--setup-placements", comma_list(s.setup_placements)},
           {"--setup-depth", i(s.setup_depth)},
           {"--setups", comma_list(s.setups)},
           {"--budget-fractions", comma_list(s.budget_fractions)},
           {"--budget-placements", comma_list(s.budget_placements)},
           {"--budget-lr", s.budget_lr ? "on" : "off"},
           {"--translate-placements", comma_list(s.translate_placements)},
           {"--translate-layers", comma_list(s.translate_layers)},
           {"--translate-steps", i(s.translate_steps)},
           {"--translate-d-model", i(s.translate_d_model)},
           {"--transfer-placements", comma_list(s.transfer_placements)},
           {"--transfer-depths", comma_list(s.transfer_depths)},
           {"--transfer-lrs", comma_list(s.transfer_lrs)},
           {"--norm-free-placements", comma_list(s.norm_free_placements)},
           {"--norm-free-budgets", comma_list(s.norm_free_budgets)},
           {"--scheme-depth", i(s.scheme_depth)},
           {"--scheme-placements", comma_list(s.scheme_placements)},
           {"--hc-placements", comma_list(s.hc_placements)},
           {"--hc-depths", comma_list(s.hc_depths)},
           {"--lens-placements", comma_list(s.lens_placements)},
           {"--lens-depth", i(s.lens_depth)},
           {"--torch-placements", comma_list(s.torch_placements)},
           {"--torch-depth", i(s.torch_depth)},
           {"--jobs", i(s.jobs)}};
  after.push_back({"--torch", s.torch ? "on" : "off"});
  after.push_back({"--flush-denormal", s.flush_denormal ? "on" : "off"});
  return training::command_line("depth_study", study::study_arguments(subject, t, after, s));
}

// Every setting of Settings as a command-line option.
void add_options(CLI::App& app, Settings& s) {
  TrainOptions& t = s.train;
  const std::vector<std::string> init_names = {"gpt2", "gpt2-unscaled", "pytorch", "xavier"};
  auto placements = [&](const char* name, std::vector<std::string>& v, const char* what) {
    app.add_option(name, v, what)->delimiter(',')->check(CLI::IsMember(variant_names()));
  };
  auto depths = [&](const char* name, std::vector<std::int64_t>& v, const char* what) {
    app.add_option(name, v, what)->delimiter(',')->check(cli::range(1, 1024) | CLI::IsMember({""}));  // '': none
  };
  app.add_option("--data", s.data, "text file to train on (default: the licence texts in /usr/share/common-licenses)");
  app.add_option("--tokenizer", s.tokenizer, "char or bpe")->check(CLI::IsMember({"char", "bpe"}));
  app.add_option("--bpe-vocab", s.bpe_vocab, "vocabulary size of the BPE tokenizer")->check(cli::range(257, 65536));
  app.add_option("--seeds", s.seeds, "comma-separated seeds; every configuration runs once per seed")->delimiter(',');
  app.add_option("--d-model", s.shape.d_model, "model width")->check(cli::positive);
  app.add_option("--heads", s.shape.heads, "attention heads (must divide --d-model)")->check(cli::positive);
  app.add_option("--seq-len", s.shape.seq_len, "context length T")->check(cli::positive);
  app.add_option("--init", s.setup.init, "init of every run but the setups stage's: gpt2 (N(0, 0.02), residual "
                                         "projections / √(2L)), gpt2-unscaled, pytorch or xavier")
      ->check(CLI::IsMember(init_names));
  app.add_option_function<std::string>("--head", [&](const std::string& v) { s.setup.tied_head = v == "tied"; },
                                        "tied (to the token embedding) or untied LM head (default untied)")
      ->check(CLI::IsMember({"tied", "untied"}));
  app.add_option("--batch", t.batch, "sequences per training step")->check(cli::positive);
  study::add_training_options(app, t);
  app.add_option("--probe-batch", s.probe_batch, "validation windows the gradients and activations are measured on")
      ->check(cli::positive);
  app.add_option("--eval-batches", s.eval_batches, "validation batches (of --batch windows) for the validation loss")
      ->check(cli::positive);
  app.add_option("--plateau-margin", s.plateau_margin,
                 "a run trains when its validation loss ends this far (nats/token) below the plateau (the entropy of the validation batches' own token frequencies)")
      ->check(cli::non_negative);
  placements("--profile-placements", s.profile_placements, "placements measured at initialization only");
  depths("--profile-depths", s.profile_depths, "depths measured at initialization only");
  app.add_option("--profile-inits", s.profile_inits, "other inits measured at initialization, side by side ('' for none)")
      ->delimiter(',')->check(CLI::IsMember(init_names) | CLI::IsMember({""}));
  placements("--profile-init-placements", s.profile_init_placements, "placements measured under --profile-inits");
  placements("--placements", s.placements, "placements of the trained grid");
  depths("--depths", s.depths, "depths of the trained grid");
  app.add_option("--lrs", s.lrs, "learning rates of the trained grid")->delimiter(',')->check(cli::positive);
  placements("--deep-placements", s.deep_placements, "placements also trained at --deep-depths");
  depths("--deep-depths", s.deep_depths, "the deepest grid depths, for --deep-placements at --deep-lr only ('' for none)");
  app.add_option("--deep-lr", s.deep_lr, "learning rate of the deep runs")->check(cli::positive);
  app.add_option("--checkpoint-from", s.checkpoint_from,
                 "activation checkpointing in trained runs of at least this many blocks (0: never)")
      ->check(cli::non_negative);
  app.add_option("--skip-depth", s.skip_depth, "grid depth whose trained runs are measured for layer similarity and skipped blocks")
      ->check(cli::range(1, 1024));
  app.add_option("--skip-threshold", s.skip_threshold, "a block can be dropped when skipping it raises the loss by less than this share")
      ->check(cli::positive);
  placements("--lr-placements", s.lr_placements, "placements of the fine learning-rate sweep");
  app.add_option("--lr-depth", s.lr_depth, "depth of the fine learning-rate sweep")->check(cli::range(1, 1024));
  app.add_option("--lr-sweep", s.lr_sweep, "learning rates of the fine sweep")->delimiter(',')->check(cli::positive);
  placements("--setup-placements", s.setup_placements, "placements trained under every --setups");
  app.add_option("--setup-depth", s.setup_depth, "depth of the setups stage")->check(cli::range(1, 1024));
  app.add_option("--setups", s.setups, "HEAD:INIT:WARMUP, comma-separated, compared side by side (e.g. tied:gpt2:15)")
      ->delimiter(',');
  app.add_option("--budget-fractions", s.budget_fractions, "the budget stage's steps, as fractions of --steps ('' for none)")
      ->delimiter(',')->check(cli::range(0.0, 1.0) | CLI::IsMember({""}));
  placements("--budget-placements", s.budget_placements, "placements of the grid run again at --budget-fractions");
  app.add_option_function<std::string>("--budget-lr", [&](const std::string& v) { s.budget_lr = v == "on"; },
                                        "on: the lr stage's runs too at --budget-fractions (the default), or off")
      ->check(CLI::IsMember({"on", "off"}));
  app.add_option("--translate-placements", s.translate_placements, "placements of the translation stage")->delimiter(',');
  depths("--translate-layers", s.translate_layers, "layers per side of the translation stage ('' for none)");
  app.add_option("--translate-steps", s.translate_steps, "training steps per translation run")->check(cli::positive);
  app.add_option("--translate-d-model", s.translate_d_model, "width of the translation models")->check(cli::positive);
  // stream (claims 12–18); '' for none skips a part
  auto optional_placements = [&](const char* name, std::vector<std::string>& v, const char* what) {
    std::vector<std::string> names = variant_names();
    names.push_back("");
    app.add_option(name, v, what)->delimiter(',')->check(CLI::IsMember(names));
  };
  optional_placements("--transfer-placements", s.transfer_placements,
                      "claim 12: placements of the lr sweep at every --transfer-depths ('' for none)");
  depths("--transfer-depths", s.transfer_depths, "claim 12: depths of the lr sweep (the parametrizations' base is 2 blocks)");
  app.add_option("--transfer-lrs", s.transfer_lrs, "claim 12: learning rates of the sweep")->delimiter(',')->check(cli::positive);
  optional_placements("--norm-free-placements", s.norm_free_placements,
                      "claim 13: placements trained beside Pre-LN at every --norm-free-budgets ('' for none)");
  app.add_option("--norm-free-budgets", s.norm_free_budgets, "claim 13: the budgets, as multiples of --steps")
      ->delimiter(',')->check(cli::range(0.0, 100.0) | CLI::IsMember({""}));
  app.add_option("--scheme-depth", s.scheme_depth, "claims 13, 15-17: depth of the schemes' runs")->check(cli::range(1, 1024));
  optional_placements("--scheme-placements", s.scheme_placements,
                      "claims 15-17: placements trained beside Pre-LN (nGPT: beside LLaMA) at --scheme-depth ('' for none)");
  optional_placements("--hc-placements", s.hc_placements, "claim 14: placements whose stream is measured by depth ('' for none)");
  depths("--hc-depths", s.hc_depths, "claim 14: depths of those runs");
  optional_placements("--lens-placements", s.lens_placements, "claim 18: placements read by the logit lens ('' for none)");
  app.add_option("--lens-depth", s.lens_depth, "claim 18: depth of the logit lens's runs")->check(cli::range(1, 1024));
  app.add_option("--torch-placements", s.torch_placements, "placements run again in PyTorch (none, post, pre, b2t)")
      ->delimiter(',')->check(CLI::IsMember({"none", "post", "pre", "b2t"}));
  app.add_option("--torch-depth", s.torch_depth, "depth of the PyTorch runs (a grid or setups depth)")->check(cli::range(1, 1024));
  app.add_option("--python", s.python, "python with torch (default: python3, then /usr/bin/python3)");
  app.add_option_function<std::string>("--torch", [&](const std::string& v) { s.torch = v == "on"; },
                                        "on: run the PyTorch twin (the default; skipped with a note when torch is missing), or off")
      ->check(CLI::IsMember({"on", "off"}));
  app.add_option("--jobs", s.jobs, "worker processes of one thread each that share the runs (0: one per core; under "
                                   "mpirun, the cores of a machine shared by its ranks)")
      ->check(cli::range(0, 64));
  app.add_option_function<std::string>("--flush-denormal", [&](const std::string& v) { s.flush_denormal = v == "on"; },
                                        "on: subnormal floats computed as 0, at full speed (the default), or off")
      ->check(CLI::IsMember({"on", "off"}));
  app.add_option("--stop-after", s.stop_after_minutes,
                 "minutes after which no run starts, nor one that would not end by then at the slowest rate seen so far; "
                 "the runs under way end and are recorded, and the same command resumes (0: no limit)")
      ->check(CLI::NonNegativeNumber);
  app.add_flag("--restart", s.restart, "discard the records of earlier runs in --out/records instead of resuming from them");
  app.add_flag("--dry-run", s.dry_run, "print the plan (its runs and block-steps, what is already recorded) and run nothing");
  app.add_option("--worker", s.worker, "(internal) run share i of the plan")->group("");
  app.add_option("--worker-file", s.worker_file, "(internal) where a worker saves its records")->group("");
  app.add_flag("--full", s.full, "the larger study: d_model 64, 4,000 steps (2M tokens a run), 5 seeds, to 128 blocks (docs/depth-study.md)");
  study::add_machinery_options(app, s, "tiny sizes for any size not given: a few seconds",
                               "exit non-zero unless the outputs exist and hold sane values, and Pre-LN's loss fell");
  app.footer(variant_help());
}

// Settles the settings that follow from others; throws on those that cannot run.
void validate(Settings& s, const CLI::App& app) {
  if (s.full) apply_full_sizes(s, app);
  if (s.jobs == 0) s.jobs = std::max(1u, std::thread::hardware_concurrency() / std::max(1u, ranks_on_this_machine()));
  if (s.worker >= s.jobs) throw ValueError("--worker " + std::to_string(s.worker) + " of --jobs " + std::to_string(s.jobs));
  s.setup.warmup = s.train.warmup;
  for (auto* list : {&s.profile_depths, &s.depths, &s.deep_depths, &s.translate_layers}) std::erase(*list, 0);  // '' reads as 0
  std::erase(s.profile_inits, std::string());
  std::erase(s.budget_fractions, 0.0);  // '' reads as 0
  std::erase(s.norm_free_budgets, 0.0);
  std::erase(s.transfer_depths, 0), std::erase(s.hc_depths, 0);
  for (auto* list : {&s.transfer_placements, &s.norm_free_placements, &s.scheme_placements, &s.hc_placements, &s.lens_placements})
    std::erase(*list, std::string());
  if (s.seeds.empty()) throw ValueError("--seeds: at least one seed");
  for (const std::string& text : s.setups) Setup::parse(text);  // throws, naming the bad part
  for (const std::string& p : s.translate_placements) nn::placement_from_name(p);
  study::require_heads_divide(s.shape.d_model, s.shape.heads);
  study::require_heads_divide(s.translate_d_model, 4);
}

study::CheckResult run_study(Settings& s, const std::string& invoked) {
  s.threads = get_num_threads();
  set_flush_denormal(s.flush_denormal);
  const std::string command = full_command(s);
  if (s.worker >= 0) {  // one share of a parent's plan: its runs go into the records folder
    run_stages(s, command, Ranks::one());
    return {};
  }
  const Ranks ranks;
  Results results;
  try {
    results = run_stages(s, command, ranks);
  } catch (const std::exception& e) {
    if (ranks.world() == 1) throw;
    // The other ranks wait in a collective for this one: end them all, after saying why.
    std::fprintf(stderr, "depth_study: rank %d: error: %s\n", ranks.rank(), e.what());
    ranks.abort();
  }
  if (!ranks.lead() || s.dry_run) return {};
  results.info.invoked = invoked;
  const std::vector<std::string> written = write_outputs(s.out, s, results);
  std::printf("wrote %zu files into %s: report.html, report.md, CSV files and SVG charts\n", written.size(), s.out.c_str());
  std::printf("total time %s (%.1f s) on %d thread(s); load average at the start %s, at the end %s\n",
              training::clock_str(results.info.seconds).c_str(), results.info.seconds, results.info.threads,
              results.info.load_start.c_str(), results.info.load_end.c_str());
  if (!s.check) return {};
  return {check_outputs(s.out, written, s, results),
          "depth_study: all checks passed (" + std::to_string(written.size()) + " files)"};
}

}  // namespace

int depth_study::run_program(int argc, char** argv) {
  Settings s;
  CLI::App app{"Tests the claims articles make about residual connections and normalization in deep transformers: "
               "gradients, trainable depth, learning rates, layer similarity, translation, and a PyTorch twin. "
               "Writes report.html, report.md, CSV files and SVG charts into --out."};
  add_options(app, s);
  const std::string invoked = training::invoked_command("depth_study", argc, argv);
  // The workers get this command line without the options the parent sets for them.
  for (int i = 0; i < argc; ++i) {
    const std::string a = argv[i];
    const bool with_value = a == "--threads" || a == "--jobs" || a == "--worker" || a == "--worker-file";
    const bool joined = a.starts_with("--threads=") || a.starts_with("--jobs=") || a.starts_with("--worker");
    if (with_value) ++i;
    else if (!joined) s.argv.push_back(a);
  }
  const study::Program program{.name = "depth_study",
                               .smoke = [&] { apply_smoke_sizes(s, app); },
                               .validate = [&] { validate(s, app); },
                               .run = [&] { return run_study(s, invoked); }};
  return study::run_main(app, argc, argv, s, program);
}
