// stages.cpp — the stages of a depth-study run, in the order of settings.hpp, with one
// progress line and ETA over all of them.
#include "stages.hpp"

#include <atomic>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <map>
#include <memory>

#include "common/study.hpp"
#include "translate/run.hpp"
#include "workers.hpp"

namespace depth_study {

using namespace tapegrad;

namespace {

std::atomic<bool> interrupted{false};
extern "C" void on_sigint(int) { interrupted = true; }

void stop_if_interrupted(const Settings& s) {
  if (interrupted)
    throw study::Interrupted("interrupted: nothing written (files of earlier runs in " + s.out + " are untouched)");
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

std::string outcome_of(const TrainResult& r, double margin) {
  if (r.status == "non-finite") return "diverged";
  return r.final_loss < r.plateau - margin ? "trains" : "plateau";
}

Results run_stages(Settings& s, const std::string& command) {
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
  if (s.worker < 0)
    std::printf("data: %s; %s tokenizer, %lld tokens; %lld train / %lld val tokens; unigram cross-entropy %.4f (train), "
              "%.4f (validation batches) nats/token\n",
              info.data.c_str(), info.tokenizer.c_str(), static_cast<long long>(V), static_cast<long long>(info.train_tokens),
              static_cast<long long>(info.val_tokens), info.unigram_train, info.unigram_validation);
  if (s.worker < 0) std::printf("rerun with: %s\n", info.command.c_str());

  const Planner plan{s};
  // ---- the plan: every run as a task with its cost (block-steps), in the report's order
  std::vector<Task> tasks;
  auto add = [&](double cost, std::function<void(training::Progress&)> run) { tasks.push_back({cost, std::move(run)}); };

  // profile: at initialization only, under --init, then the other inits side by side
  auto profile = [&](const std::string& init, const std::vector<std::string>& placements) {
    Setup setup = s.setup;
    setup.init = init;
    for (std::uint64_t seed : s.seeds)
      for (std::int64_t depth : s.profile_depths)
        for (const std::string& name : placements)
          add(static_cast<double>(depth) * plan.probe_cost(), [&, setup, init, name, depth, seed, task = tasks.size()](
                                                                   training::Progress& progress) {
            stop_if_interrupted(s);
            ProfileRecord r{init, &variant_from_name(name), depth, seed, {}, task};
            auto model = build_model(*r.variant, depth, setup, s.shape, V, seed);
            r.at_init = measure(*model, data.probe);
            progress.done += static_cast<double>(depth) * plan.probe_cost();
            progress.show("profile " + r.variant->label + " L=" + std::to_string(depth) + " init " + init + " seed " +
                          std::to_string(seed));
            res.profile.push_back(std::move(r));
          });
  };
  profile(s.setup.init, s.profile_placements);
  for (const std::string& init : s.profile_inits)
    if (init != s.setup.init) profile(init, s.profile_init_placements);

  // the trained stages
  auto train_one = [&](const std::string& stage, const std::string& name, std::int64_t depth, double lr, const Setup& setup,
                       std::uint64_t seed) {
    add(static_cast<double>(depth * (s.train.steps + s.eval_batches)), [&, stage, name, depth, lr, setup, seed,
                                                                        task = tasks.size()](training::Progress& progress) {
      stop_if_interrupted(s);
      TrainedRecord r;
      r.stage = stage, r.variant = &variant_from_name(name), r.depth = depth, r.lr = lr, r.setup = setup, r.seed = seed;
      r.task = task;
      r.steps = s.train.steps;
      auto model = build_model(*r.variant, r.depth, r.setup, s.shape, V, r.seed);
      if (s.checkpoint_from > 0 && r.depth >= s.checkpoint_from) model->set_activation_checkpointing(true);
      TrainOptions o = s.train;
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
      if (r.stage == "grid" && r.depth == s.skip_depth && r.outcome != "diverged") {
        r.after = measure(*model, data.probe);
        model->zero_grad();
        r.skip_losses = skip_block_losses(*model, data);
        r.measured_after = true;
      }
      progress.line(what + ": val " + study::fmt(r.train.val_loss) + " (" + r.outcome + ")");
      res.trained.push_back(std::move(r));
    });
  };
  for (std::uint64_t seed : s.seeds) {
    for (std::int64_t depth : s.depths)
      for (const std::string& name : s.placements)
        for (double lr : s.lrs) train_one("grid", name, depth, lr, s.setup, seed);
    for (std::int64_t depth : s.deep_depths)
      for (const std::string& name : s.deep_placements) train_one("grid", name, depth, s.deep_lr, s.setup, seed);
    for (const std::string& name : s.lr_placements)
      for (double lr : s.lr_sweep) train_one("lr", name, s.lr_depth, lr, s.setup, seed);
    for (const std::string& text : s.setups)
      for (const std::string& name : s.setup_placements)
        train_one("setups", name, s.setup_depth, s.train.lr, Setup::parse(text), seed);
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
        add(static_cast<double>(layers * s.translate_steps), [&, p, layers, seed, task = tasks.size()](training::Progress& progress) {
          stop_if_interrupted(s);
          translate::Settings t = ts;
          t.seed = seed;
          const translate::RunResult r = translate::train_one(p, layers, data_of(seed), t, progress);
          TranslateRecord x{p, layers, seed, r.diverged(), r.diverged() ? NAN : r.val_loss.back(), r.exact_match,
                            r.token_accuracy, r.seconds, task};
          progress.line("translate " + translate::run_name(p, layers) + " seed " + std::to_string(seed) + ": " +
                        (x.diverged ? std::string("diverged") : "val " + study::fmt(x.val_loss) + ", exact match " +
                                                                    study::fmt(x.exact_match, 3)));
          res.translate.push_back(x);
        });

  // ---- run it: here, or in --jobs worker processes (workers.hpp), or as one of them
  std::vector<double> costs;
  for (const Task& t : tasks) costs.push_back(t.cost);
  const auto shares = partition(costs, s.worker >= 0 || s.jobs > 1 ? s.jobs : 1);
  const std::vector<std::size_t>& mine = s.worker >= 0 ? shares.at(static_cast<std::size_t>(s.worker)) : shares.front();
  double work = 0;
  for (std::size_t i : mine) work += costs[i];
  training::Progress progress(s.worker < 0 && s.jobs > 1 ? 0.0 : work);
  if (s.worker >= 0) progress.set_terminal(false);  // the workers share one terminal: whole lines
  info.load_start = progress.load_at_start;
  if (s.worker < 0) {
    std::printf("plan: %zu seed(s); profile %zu x %zu depths at init; grid %zu placements x %zu depths x %zu lrs (+%zu x "
                "depths %s); lr sweep %zu x %zu; setups %zu x %zu; translate %zu x %zu; %lld steps per LM run; %zu tasks in "
                "%lld process(es)\n",
                s.seeds.size(), s.profile_placements.size(), s.profile_depths.size(), s.placements.size(), s.depths.size(),
                s.lrs.size(), s.deep_placements.size(), study::comma_list(s.deep_depths).c_str(), s.lr_placements.size(),
                s.lr_sweep.size(), s.setup_placements.size(), s.setups.size(), s.translate_placements.size(),
                s.translate_layers.size(), static_cast<long long>(s.train.steps), tasks.size(), static_cast<long long>(s.jobs));
    std::fflush(stdout);
  }
  if (s.worker < 0 && s.jobs > 1) {
    merge_into(res, run_workers(s, shares, costs));
  } else {
    for (std::size_t i : mine) tasks[i].run(progress);
  }
  if (s.worker >= 0) return res;  // the worker's share; main() saves it for the parent

  // ---- torch: a subset of the grid again in PyTorch, same data, batches and settings
  if (s.torch && !s.torch_placements.empty()) {
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
    progress.line("torch: running the PyTorch twin of " + study::join(s.torch_placements) + " at depth " +
                  std::to_string(s.torch_depth) + " ...");
    res.torch = run_torch(dir, s.python);  // one thread, as each of tapegrad's workers
    progress.line(res.torch.skipped.empty() ? "torch: " + std::to_string(res.torch.runs.size()) + " runs with PyTorch " +
                                                  res.torch.torch_version
                                            : "torch: not run: " + res.torch.skipped);
  }

  info.seconds = progress.elapsed();
  info.load_end = training::load_average();
  return res;
}

}  // namespace depth_study
