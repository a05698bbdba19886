// stages.cpp — the stages of a depth-study run, in the order of settings.hpp, with one
// progress line and ETA over all of them.
#include "stages.hpp"

#include <atomic>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <future>
#include <map>
#include <set>
#include <memory>

#include "common/study.hpp"
#include "plan.hpp"
#include "translate/run.hpp"
#include "workers.hpp"

namespace depth_study {

using namespace tapegrad;

namespace {

std::atomic<bool> interrupted{false};
extern "C" void on_sigint(int) { interrupted = true; }

void stop_if_interrupted(const Settings& s) {
  if (interrupted) throw study::Interrupted(interrupted_message(s));
}

// "%.17g": a key that tells every double apart.
std::string exact(double v) {
  char text[32];
  std::snprintf(text, sizeof text, "%.17g", v);
  return text;
}

// What every LM run shares (records.hpp's shared key): a run recorded under other settings is
// another run.
std::string shared_key(const Settings& s) {
  const TrainOptions& t = s.train;
  return "data " + (s.data.empty() ? std::string("default") : s.data) + " tokenizer " + s.tokenizer +
         (s.tokenizer == "bpe" ? " " + std::to_string(s.bpe_vocab) : "") + " d_model " + std::to_string(s.shape.d_model) +
         " heads " + std::to_string(s.shape.heads) + " seq_len " + std::to_string(s.shape.seq_len) + " batch " +
         std::to_string(t.batch) + " " + t.optimizer + " wd " + exact(t.weight_decay) + " beta2 " + exact(t.beta2) + " " +
         t.schedule + " min_lr " + exact(t.min_lr_ratio) + " clip " + exact(t.clip) + " probe " + std::to_string(s.probe_batch) +
         " eval " + std::to_string(s.eval_batches) + " margin " + exact(s.plateau_margin) +
         (s.flush_denormal ? " flush-denormal" : "");
}

// What a model that ignores the context reaches (training::Unigram): the plateau.
void unigram_baselines(const data::TokenStream& stream, Data& data, SetupInfo& info) {
  training::Unigram unigram(data.vocab_size);
  unigram.add_all(stream.tokens(data::Split::train));
  data.unigram = unigram;
  info.unigram_train = unigram.cross_entropy(stream.tokens(data::Split::train));
  std::vector<std::int64_t> targets;
  for (const data::Batch& b : data.validation)
    for (auto t : b.targets.to_vector<std::int64_t>()) targets.push_back(t);
  info.unigram_validation = unigram.cross_entropy(targets);
}

// The cost of measuring a model on the probe batch, in units of one training step.
struct Planner {
  const Settings& s;
  double probe_cost() const { return 1.0 + 2.0 * static_cast<double>(s.probe_batch) / static_cast<double>(s.train.batch); }
};

}  // namespace

std::string interrupted_message(const Settings& s) {
  return "interrupted: the runs that finished are recorded in " + s.out +
         "/records, and the same command resumes from there; no report written";
}

std::int64_t budget_steps(const Settings& s, double fraction) {
  return std::max<std::int64_t>(1, std::llround(static_cast<double>(s.train.steps) * fraction));
}

std::int64_t denseformer_rival_depth(const Settings& s) { return std::llround(1.5 * static_cast<double>(s.scheme_depth)); }

std::string outcome_of(const TrainResult& r, double margin) {
  if (r.status == "non-finite") return "diverged";
  return r.final_loss < r.plateau - margin ? "trains" : "plateau";
}

Results run_stages(Settings& s, const std::string& command, const Ranks& ranks) {
  std::signal(SIGINT, on_sigint);
  Results res;
  SetupInfo& info = res.info;
  info.command = command;
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
  Data data = make_data(stream, V, s.probe_batch, s.eval_batches, s.train.batch, s.shape.seq_len);
  s.train.seq_len = s.shape.seq_len;
  info.data = std::to_string(corpus.names().size()) + " file(s), " + std::to_string(corpus.num_bytes()) + " bytes" +
              (s.data.empty() ? " (the default corpus: the licence texts of /usr/share/common-licenses)" : ": " + s.data);
  info.tokenizer = tokenizer->name();
  info.vocab_size = V;
  info.train_tokens = stream.size(data::Split::train);
  info.val_tokens = stream.size(data::Split::val);
  unigram_baselines(stream, data, info);
  if (s.worker < 0 && ranks.lead())
    std::printf("data: %s; %s tokenizer, %lld tokens; %lld train / %lld val tokens; unigram cross-entropy %.4f (train), "
              "%.4f (validation batches) nats/token\n",
              info.data.c_str(), info.tokenizer.c_str(), static_cast<long long>(V), static_cast<long long>(info.train_tokens),
              static_cast<long long>(info.val_tokens), info.unigram_train, info.unigram_validation);
  if (s.worker < 0 && ranks.lead()) std::printf("rerun with: %s\n", info.command.c_str());

  const Planner plan{s};
  // ---- the plan: every run as a task with its cost (block-steps), in the report's order
  std::vector<Task> tasks;
  auto add = [&](const std::string& key, double cost, std::function<void(training::Progress&, Results&)> run) {
    tasks.push_back({key, cost, std::move(run), {}});
  };

  // profile: at initialization only, under --init, then the other inits side by side
  auto profile = [&](const std::string& init, const std::vector<std::string>& placements) {
    Setup setup = s.setup;
    setup.init = init;
    for (std::uint64_t seed : s.seeds)
      for (std::int64_t depth : s.profile_depths)
        for (const std::string& name : placements)
          add("profile " + name + " L=" + std::to_string(depth) + " init " + init + " head " + (setup.tied_head ? "tied" : "untied") +
                  " seed " + std::to_string(seed),
              static_cast<double>(depth) * plan.probe_cost(),
              [&, setup, init, name, depth, seed, task = tasks.size()](training::Progress& progress, Results& out) {
            stop_if_interrupted(s);
            const auto start = std::chrono::steady_clock::now();
            ProfileRecord r{init, &variant_from_name(name), depth, seed, {}, 0, task};
            auto model = build_model(*r.variant, depth, setup, s.shape, V, seed);
            r.at_init = measure(*model, data.probe);
            r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
            progress.done += static_cast<double>(depth) * plan.probe_cost();
            progress.show("profile " + r.variant->label + " L=" + std::to_string(depth) + " init " + init + " seed " +
                          std::to_string(seed));
            out.profile.push_back(std::move(r));
          });
  };
  profile(s.setup.init, s.profile_placements);
  for (const std::string& init : s.profile_inits)
    if (init != s.setup.init) profile(init, s.profile_init_placements);

  // the trained stages
  std::map<std::string, std::size_t> planned;  // key -> task
  auto train_one = [&](const std::string& stage, const std::string& name, std::int64_t depth, double lr, const Setup& setup,
                       std::uint64_t seed, std::int64_t steps) {
    // The key names what the run does, not the stage that asks for it: a run that two stages
    // ask for (the lr sweep's point at a grid lr, the setups stage's default setup) runs once
    // and is recorded for both. Only the measurements after training (at --skip-depth, and in
    // the stream stage) are part of what it does.
    const bool measured_after = (stage == "grid" || stage == "budget") && depth == s.skip_depth;
    // The stream stage's runs are measured after training (the stream's size, the logit lens):
    // they are their own runs, not the grid's.
    const bool measured_stream = stage == "stream";
    const std::string key = "train " + name + " L=" + std::to_string(depth) + " lr " + exact(lr) + " " + setup.name() +
                            " seed " + std::to_string(seed) + " steps " + std::to_string(steps) +
                            (measured_after ? " skip " + exact(s.skip_threshold) : "") + (measured_stream ? " stream" : "");
    if (const auto twin = planned.find(key); twin != planned.end()) {
      auto& stages = tasks[twin->second].stages;
      if (std::find(stages.begin(), stages.end(), stage) == stages.end()) stages.push_back(stage);
      return;
    }
    planned[key] = tasks.size();
    add(key, static_cast<double>(depth * (steps + s.eval_batches)), [&, stage, name, depth, lr, setup, seed, steps, measured_after,
                                                                    measured_stream, task = tasks.size()](training::Progress& progress,
                                                                                                          Results& out) {
      stop_if_interrupted(s);
      TrainedRecord r;
      r.stage = stage, r.variant = &variant_from_name(name), r.depth = depth, r.lr = lr, r.setup = setup, r.seed = seed;
      r.task = task;
      r.steps = steps;
      auto model = build_model(*r.variant, r.depth, r.setup, s.shape, V, r.seed);
      if (measured_stream) r.stream_rms_init = stream_rms(*model, data.probe);
      if (s.checkpoint_from > 0 && r.depth >= s.checkpoint_from) model->set_activation_checkpointing(true);
      TrainOptions o = s.train;
      o.steps = steps;
      o.lr = r.lr;
      o.warmup = r.setup.warmup;
      o.batch_seed = r.seed ^ 0x5eedULL;
      const std::string what = r.stage + " " + r.variant->label + " L=" + std::to_string(r.depth) + " lr " + study::fmt(r.lr) +
                               (r.stage == "setups" ? " " + r.setup.name() : "") + " seed " + std::to_string(r.seed);
      r.train = train(*model, data, o, [&](std::int64_t step, double loss) {
        progress.done += static_cast<double>(r.depth);
        char line[240];
        std::snprintf(line, sizeof line, "%s  step %lld/%lld  loss %.4f", what.c_str(), static_cast<long long>(step),
                      static_cast<long long>(o.steps), loss);
        progress.show(line);
        return !interrupted;
      });
      stop_if_interrupted(s);
      progress.done += static_cast<double>(r.depth * s.eval_batches);
      r.outcome = outcome_of(r.train, s.plateau_margin);
      const auto measure_start = std::chrono::steady_clock::now();
      if (measured_after && r.outcome != "diverged") {
        r.after = measure(*model, data.probe);
        model->zero_grad();
        r.skip_losses = skip_block_losses(*model, data);
        r.measured_after = true;
      }
      if (measured_stream && r.outcome != "diverged") {
        r.stream_rms_after = stream_rms(*model, data.probe);
        r.lens = lens_losses(*model, data);
        r.measured_stream = true;
      }
      r.measure_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - measure_start).count();
      progress.line(what + ": val " + study::fmt(r.train.val_loss) + " (" + r.outcome + ")");
      out.trained.push_back(std::move(r));
    });
    tasks.back().stages = {stage};
  };
  for (std::uint64_t seed : s.seeds) {
    for (std::int64_t depth : s.depths)
      for (const std::string& name : s.placements)
        for (double lr : s.lrs) train_one("grid", name, depth, lr, s.setup, seed, s.train.steps);
    for (std::int64_t depth : s.deep_depths)
      for (const std::string& name : s.deep_placements) train_one("grid", name, depth, s.deep_lr, s.setup, seed, s.train.steps);
    for (const std::string& name : s.lr_placements)
      for (double lr : s.lr_sweep) train_one("lr", name, s.lr_depth, lr, s.setup, seed, s.train.steps);
    for (const std::string& text : s.setups)
      for (const std::string& name : s.setup_placements)
        train_one("setups", name, s.setup_depth, s.train.lr, Setup::parse(text), seed, s.train.steps);
    // budget: runs of the grid and of the lr stage again at shorter budgets (--budget-fractions
    // of --steps, the warm-up shortened alike): how far each figure still moves with the steps
    for (double fraction : s.budget_fractions) {
      Setup setup = s.setup;
      setup.warmup = std::llround(static_cast<double>(s.setup.warmup) * fraction);
      const std::int64_t steps = budget_steps(s, fraction);
      for (std::int64_t depth : s.depths)
        for (const std::string& name : s.budget_placements)
          for (double lr : s.lrs) train_one("budget", name, depth, lr, setup, seed, steps);
      if (s.budget_lr)
        for (const std::string& name : s.lr_placements)
          for (double lr : s.lr_sweep) train_one("budget", name, s.lr_depth, lr, setup, seed, steps);
    }
    // stream: the residual stream's designs (claims 12–18)
    for (std::int64_t depth : s.transfer_depths)
      for (const std::string& name : s.transfer_placements)
        for (double lr : s.transfer_lrs) train_one("stream", name, depth, lr, s.setup, seed, s.train.steps);
    for (double multiple : s.norm_free_budgets) {
      Setup setup = s.setup;
      setup.warmup = std::llround(static_cast<double>(s.setup.warmup) * multiple);
      const std::int64_t steps = budget_steps(s, multiple);
      for (const std::string& name : s.norm_free_placements)
        for (const std::string& base : {std::string("pre"), name})
          train_one("stream", base, s.scheme_depth, s.train.lr, setup, seed, steps);
    }
    for (const std::string& name : s.scheme_placements) {
      const bool hypersphere = nn::placement_info(variant_from_name(name).placement).hypersphere;
      train_one("stream", hypersphere ? "llama" : "pre", s.scheme_depth, s.train.lr, s.setup, seed, s.train.steps);
      train_one("stream", name, s.scheme_depth, s.train.lr, s.setup, seed, s.train.steps);
      if (name == "denseformer") train_one("stream", "pre", denseformer_rival_depth(s), s.train.lr, s.setup, seed, s.train.steps);
    }
    for (std::int64_t depth : s.hc_depths)
      for (const std::string& name : s.hc_placements) train_one("stream", name, depth, s.train.lr, s.setup, seed, s.train.steps);
    for (const std::string& name : s.lens_placements)
      train_one("stream", name, s.lens_depth, s.train.lr, s.setup, seed, s.train.steps);
  }

  // translate: examples/translate's task and models, its own defaults but the study's seeds
  translate::Settings ts;
  ts.steps = s.translate_steps;
  ts.warmup = std::max<std::int64_t>(1, s.translate_steps / 10);
  ts.d_model = s.translate_d_model;
  ts.eval_interval = s.translate_steps;
  ts.examples = 0;
  ts.val_size = s.smoke ? 32 : 128;
  ts.batch = s.smoke ? 16 : 32;
  if (!s.translate_layers.empty() && !s.translate_placements.empty())
    res.translate_unigram = translate::TranslationData(ts.val_size, s.seeds.front() + 1).unigram_baseline(s.seeds.front() + 2);
  // One held-out set per seed, built by the first of that seed's tasks this process runs
  // (its own generator: building it later or once changes nothing) and shared by the others.
  std::map<std::uint64_t, std::unique_ptr<const translate::TranslationData>> translation_data;
  auto data_of = [&, val_size = ts.val_size](std::uint64_t seed) -> const translate::TranslationData& {
    auto& d = translation_data[seed];
    if (!d) d = std::make_unique<const translate::TranslationData>(val_size, seed + 1);
    return *d;
  };
  for (std::uint64_t seed : s.seeds)
    for (std::int64_t layers : s.translate_layers)
      for (const std::string& p : s.translate_placements)
        add("translate " + p + " layers " + std::to_string(layers) + " seed " + std::to_string(seed) + " steps " +
                std::to_string(ts.steps) + " d_model " + std::to_string(ts.d_model) + " val " + std::to_string(ts.val_size) +
                " batch " + std::to_string(ts.batch),
            static_cast<double>(layers * s.translate_steps),
            [&, p, layers, seed, task = tasks.size()](training::Progress& progress, Results& out) {
          stop_if_interrupted(s);
          translate::Settings t = ts;
          t.seed = seed;
          const translate::RunResult r = translate::train_one(p, layers, data_of(seed), t, progress);
          TranslateRecord x{p, layers, seed, r.diverged(), r.diverged() ? NAN : r.val_loss.back(), r.exact_match,
                            r.token_accuracy, r.seconds, task};
          progress.line("translate " + translate::run_name(p, layers) + " seed " + std::to_string(seed) + ": " +
                        (x.diverged ? std::string("diverged") : "val " + study::fmt(x.val_loss) + ", exact match " +
                                                                    study::fmt(x.exact_match, 3)));
          out.translate.push_back(x);
        });

  // ---- run it (plan.hpp): the runs not yet recorded, over the ranks and worker processes
  const RecordStore store(s.out + "/records", shared_key(s), s.restart && s.worker < 0 && !s.dry_run);
  std::unique_ptr<training::Progress> progress;
  auto make_progress = [&](double work) -> training::Progress& {
    progress = std::make_unique<training::Progress>(work);
    if (s.worker >= 0 || ranks.world() > 1) progress->set_terminal(false);  // processes sharing a terminal: whole lines
    info.load_start = progress->load_at_start;
    return *progress;
  };
  if (s.worker >= 0) {  // a worker: the share its parent wrote, into the records folder
    const std::vector<std::size_t> share = read_share(s.worker_file, tasks.size());
    double work = 0;
    for (std::size_t i : share) work += tasks[i].cost;
    run_share(s, tasks, share, store, make_progress(work));
    return res;
  }
  if (ranks.lead()) print_plan(s, tasks, ranks);
  ranks.barrier();  // every rank's --restart has emptied its records folder (ranks may share one)
  const Recorded recorded_at_start = recorded(tasks, store);
  if (s.dry_run) {
    if (ranks.lead())
      std::printf("dry run: %zu of the %zu runs are recorded in %s; %.3g block-steps left to run\n", recorded_at_start.runs,
                  tasks.size(), store.dir().c_str(), recorded_at_start.cost_left);
    return res;
  }
  // ---- torch: a subset of the grid again in PyTorch, same data, batches and settings. Its
  // one process starts beside the plan's: run after the plan, it left one core idle for its
  // minutes (the plan's last runs fill the other).
  std::future<TorchOutcome> torch_twin;
  if (ranks.lead() && s.torch && !s.torch_placements.empty()) {
    TorchSetup t;
    t.d_model = s.shape.d_model, t.heads = s.shape.heads, t.seq_len = s.shape.seq_len;
    t.batch = s.train.batch, t.steps = s.train.steps, t.warmup = s.setup.warmup;
    t.lr_default = s.train.lr, t.schedule = s.train.schedule, t.min_lr_ratio = s.train.min_lr_ratio;
    t.weight_decay = s.train.weight_decay, t.clip = s.train.clip, t.beta2 = s.train.beta2;
    t.init = s.setup.init, t.tie_head = s.setup.tied_head;
    t.placements = s.torch_placements, t.depths = {s.torch_depth}, t.lrs = {s.train.lr}, t.seeds = s.seeds;
    const std::string dir = s.out + "/torch";
    std::filesystem::create_directories(dir);
    export_for_torch(dir, data, t);
    std::printf("torch: running the PyTorch twin of %s at depth %lld beside the plan ...\n", study::join(s.torch_placements).c_str(),
                static_cast<long long>(s.torch_depth));
    std::fflush(stdout);
    torch_twin = std::async(std::launch::async, [&s, dir] { return run_torch(dir, s.python); });  // one thread
  }
  const auto plan_start = std::chrono::steady_clock::now();
  Results recorded = run_plan(s, tasks, recorded_at_start, store, ranks, make_progress);
  info.plan_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - plan_start).count();
  info.processes = s.jobs * ranks.world();
  info.runs = tasks.size();
  info.resumed_runs = recorded_at_start.runs;
  if (!ranks.lead()) return res;  // rank 0 writes the report
  merge_into(res, std::move(recorded));
  training::Progress& progress_line = *progress;

  // ---- torch: the twin's runs end here
  if (torch_twin.valid()) {
    res.torch = torch_twin.get();
    progress_line.line(res.torch.skipped.empty() ? "torch: " + std::to_string(res.torch.runs.size()) + " runs with PyTorch " +
                                                       res.torch.torch_version
                                                 : "torch: not run: " + res.torch.skipped);
  }

  info.seconds = progress_line.elapsed();
  info.load_end = training::load_average();
  return res;
}

}  // namespace depth_study
