// translate/main.cpp — study: does the norm placement decide whether a deep encoder-decoder trains?
//
// A Seq2SeqTransformer learns TranslationTask, a toy language pair (SVO English-like source,
// SOV target with case particles, a plural marker and object agreement), once per placement
// (Post-LN, Pre-LN, B2T) and depth (layers per side), with the same seed, initial weights
// drawn the same way, the same batches and the same held-out set:
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
#include <tapegrad/tapegrad.hpp>

#include <CLI/CLI.hpp>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "common/study.hpp"
#include "common/report.hpp"

using namespace tapegrad;
namespace fs = std::filesystem;

namespace {

// The optimizer, schedule and steps (Training), seed, threads, --out, --smoke, --check
// (Machinery), and the rest:
struct Settings : study::Training, study::Machinery {
  std::vector<std::string> placements = {"post", "pre", "b2t"};
  std::vector<std::int64_t> layers = {6, 18};
  std::int64_t d_model = 64, heads = 4, d_ff = 0, batch = 32;
  std::int64_t eval_interval = 25, val_size = 256, examples = 3;
  double dropout = 0.0;
  std::string init = "xavier", activation = "relu";
  std::string b2t_scaling = "off";  // off, b2t (the b2t runs only) or on (every run)

  Settings() {  // β₂ = 0.98 as in Vaswani et al. 2017
    lr = 1e-3, weight_decay = 0.01, min_lr_ratio = 0.1, clip = 0.0, beta2 = 0.98, steps = 300, warmup = 30;
    seed = 1, out = "translate_out";
  }
  // Whether a run scales its block weights by L^(-1/2) (model_init.hpp's b2t_scaling).
  bool scaled(const std::string& placement) const {
    return b2t_scaling == "on" || (b2t_scaling == "b2t" && placement == "b2t");
  }
};

// ---------------------------------------------------------------- data

// The held-out sentences, and training batches that never contain them: exact match on the
// held-out set measures translation of sentences the model has not seen (the task has
// 60·5·60 = 18000 distinct sources, so a few hundred held out leaves plenty to train on).
struct TranslationData {
  data::TranslationTask task;
  std::vector<data::SeqPair> val;
  std::set<std::vector<std::int64_t>> val_sources;

  TranslationData(std::int64_t val_size, std::uint64_t seed) {
    Generator gen(seed);
    while (static_cast<std::int64_t>(val.size()) < val_size) {
      data::SeqPair p = task.sample(gen);
      if (val_sources.insert(p.source).second) val.push_back(std::move(p));
    }
  }

  std::vector<data::SeqPair> train_batch(std::int64_t n, Generator& gen) const {
    std::vector<data::SeqPair> batch;
    while (static_cast<std::int64_t>(batch.size()) < n) {
      data::SeqPair p = task.sample(gen);
      if (!val_sources.count(p.source)) batch.push_back(std::move(p));
    }
    return batch;
  }

  // Cross-entropy of the target-token frequencies (targets and EOS, counted on training
  // pairs) on the held-out targets: the score of a model that ignores the source and the
  // prefix.
  double unigram_baseline(std::uint64_t seed) const {
    auto targets = [](const std::vector<data::SeqPair>& pairs) {
      std::vector<std::int64_t> tokens;
      for (const auto& p : pairs) {
        tokens.insert(tokens.end(), p.target.begin(), p.target.end());
        tokens.push_back(data::kEos);
      }
      return tokens;
    };
    training::Unigram unigram(task.vocab().size());
    Generator gen(seed);
    unigram.add_all(targets(train_batch(4000, gen)));
    return unigram.cross_entropy(targets(val));
  }
};

// ---------------------------------------------------------------- one run

struct Decoding {
  std::string source, expected, decoded;
  bool correct;
};

struct RunResult : study::RunLog {  // steps, training loss, divergence, time
  std::string placement;
  std::int64_t layers = 0;
  std::vector<double> grad_norm, lr;  // one per step run
  std::vector<double> val_loss;       // one per val_steps
  double token_accuracy = NAN, exact_match = NAN;
  std::vector<Decoding> decodings;
};

// Teacher-forced: the decoder reads the true prefix. Loss per target token (EOS included);
// a token counts as right when the argmax of its logits is the true token.
training::Scores evaluate(nn::Seq2SeqTransformer& model, const TranslationData& d, std::int64_t batch) {
  NoGradGuard no_grad;
  model.eval();
  training::Scores scores;
  for (const auto chunk : study::chunks(d.val, batch)) {
    const data::Seq2SeqBatch b = data::collate_seq2seq(chunk);
    scores.add(model.forward(b.src, b.tgt_in, b.src_pad_mask, b.tgt_pad_mask), b.tgt_out);
  }
  model.train();
  return scores;
}

// Greedy decoding of every held-out source; exact when the words before the first EOS equal
// task.solve(source) and an EOS was produced. Keeps the first `keep` as examples.
double exact_match(nn::Seq2SeqTransformer& model, const TranslationData& d, std::int64_t batch, std::int64_t keep,
                   std::vector<Decoding>& examples) {
  const data::Vocab& vocab = d.task.vocab();
  const std::int64_t max_len = d.task.max_target_len() + 2;  // BOS, target, EOS
  double exact = 0;
  for (const auto chunk : study::chunks(d.val, batch)) {
    const data::Seq2SeqBatch b = data::collate_seq2seq(chunk);
    const Tensor out = model.greedy_decode(b.src, data::kBos, data::kEos, max_len, b.src_pad_mask);
    const auto width = static_cast<std::size_t>(out.size(1));
    const auto tokens = out.to_vector<std::int64_t>();
    for (std::size_t r = 0; r < chunk.size(); ++r) {
      bool ended = false;  // row r: BOS, then the decoded words
      const auto decoded = study::until_eos(tokens, r * width + 1, (r + 1) * width, data::kEos, ended);
      const std::vector<std::int64_t> expected = d.task.solve(chunk[r].source);
      const bool correct = ended && decoded == expected;
      exact += correct;
      if (static_cast<std::int64_t>(examples.size()) < keep)
        examples.push_back({vocab.join(chunk[r].source), vocab.join(expected), vocab.join(decoded), correct});
    }
  }
  return exact / static_cast<double>(d.val.size());
}

// Progress is counted in layer-steps (steps × layers per side): a step costs about its depth.
RunResult train_one(const std::string& placement, std::int64_t layers, const TranslationData& d, const Settings& s,
                    training::Progress& progress) {
  RunResult r;
  r.placement = placement;
  r.layers = layers;
  const auto start = std::chrono::steady_clock::now();

  manual_seed(s.seed);  // the same initial draws for every run of the same shape
  nn::Seq2SeqConfig config;
  const std::int64_t V = d.task.vocab().size();
  config.src_vocab_size = config.tgt_vocab_size = V;
  config.max_seq_len = std::max(d.task.max_source_len(), d.task.max_target_len()) + 2;
  config.n_encoder_layers = config.n_decoder_layers = layers;
  config.block.d_model = s.d_model;
  config.block.n_heads = s.heads;
  config.block.d_ff = s.d_ff;
  config.block.activation = nn::activation_from_name(s.activation);
  config.block.placement = nn::placement_from_name(placement);
  config.block.dropout = s.dropout;
  config.init = nn::init_scheme_from_name(s.init);
  config.b2t_scaling = s.scaled(placement);
  nn::Seq2SeqTransformer model(config);
  r.parameters = model.num_parameters();
  auto optimizer = study::make_optimizer(model, s);
  auto schedule = training::make_schedule(*optimizer, s.schedule_settings());
  const nn::NamedTensors params = model.named_parameters();

  Generator batch_gen(s.seed ^ 0xba7c4ULL);  // the same batches for every run
  const std::string name = placement + " L=" + std::to_string(layers);
  r.val_steps.push_back(0);
  r.val_loss.push_back(evaluate(model, d, s.batch).loss());
  for (std::int64_t step = 0; step < s.steps; ++step) {
    schedule->apply(step);
    const data::Seq2SeqBatch b = data::collate_seq2seq(d.train_batch(s.batch, batch_gen));
    const Tensor logits = model.forward(b.src, b.tgt_in, b.src_pad_mask, b.tgt_pad_mask);
    const Tensor loss = cross_entropy(logits.reshape({-1, V}), b.tgt_out.reshape({-1}));
    const training::UpdateResult u = training::update(*optimizer, loss, params, s.clip);
    if (!r.record(step, loss.item(), u)) break;
    r.grad_norm.push_back(u.grad_norm);
    r.lr.push_back(optimizer->lr(0));
    progress.done += static_cast<double>(layers);
    if (r.validation_due(s.eval_interval, s.steps)) {
      const training::Scores e = evaluate(model, d, s.batch);
      r.val_steps.push_back(static_cast<double>(r.steps_run));
      r.val_loss.push_back(e.loss());
      r.token_accuracy = e.token_accuracy();  // the last one is the final one: the last step evaluates
      if (!std::isfinite(e.loss())) {  // finite gradients, but the update overflowed
        r.diverged_at = r.steps_run;
        r.diverged_why = "non-finite validation loss";
        break;
      }
    }
    char line[160];
    std::snprintf(line, sizeof line, "%s  step %lld/%lld  loss %.4f  val %.4f  |g| %.3g", name.c_str(),
                  static_cast<long long>(r.steps_run), static_cast<long long>(s.steps), loss.item(), r.val_loss.back(), u.grad_norm);
    progress.show(line);
  }
  if (r.diverged()) r.token_accuracy = NAN;
  else r.exact_match = exact_match(model, d, s.batch, s.examples, r.decodings);
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return r;
}

// ---------------------------------------------------------------- report

// The settings as (option, value), in the order of --help: the command line that reproduces
// the run (with --smoke, the tiny values it chose).
training::Arguments arguments(const Settings& s) {
  auto i = [](std::int64_t v) { return std::to_string(v); };
  training::Arguments a = {{"--placements", study::comma_list(s.placements)}, {"--layers", study::comma_list(s.layers)},
                        {"--d-model", i(s.d_model)}, {"--heads", i(s.heads)}, {"--d-ff", i(s.d_ff)},
                        {"--activation", s.activation}, {"--dropout", study::fmt(s.dropout, 6)}, {"--init", s.init},
                        {"--b2t-scaling", s.b2t_scaling}};
  for (const auto& option : study::training_arguments(s)) a.push_back(option);
  a.insert(a.end(), {{"--batch", i(s.batch)}, {"--eval-interval", i(s.eval_interval)}, {"--val-size", i(s.val_size)},
                     {"--examples", i(s.examples)}, {"--seed", std::to_string(s.seed)}, {"--threads", i(s.threads)},
                     {"--out", s.out}});
  return a;
}

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

// One colour per placement; every other depth dashed.
void write_charts(const std::vector<RunResult>& runs, const Settings& s) {
  study::LineChart val("Validation loss (teacher-forced, per target token)", "step", "cross-entropy (nats, log scale)");
  study::LineChart train("Training loss (moving average, β = 0.9)", "step", "cross-entropy (nats, log scale)");
  val.log_y = train.log_y = true;
  for (const RunResult& r : runs) {
    const std::string name = r.placement + " L=" + std::to_string(r.layers);
    const bool dashed = (std::find(s.layers.begin(), s.layers.end(), r.layers) - s.layers.begin()) % 2 == 1;
    val.series.push_back({name, r.val_steps, r.val_loss, dashed});
    train.series.push_back(study::loss_curve(name, r.train_loss, 0.9, dashed));
  }
  val.write_svg(s.out + "/val_loss.svg");
  train.write_svg(s.out + "/train_loss.svg");
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

void write_report(const std::vector<RunResult>& runs, const Settings& s, double baseline, const std::string& timing) {
  const char* scaling = s.b2t_scaling == "off" ? "off, as by default: B2T is the connection alone"
                        : s.b2t_scaling == "b2t" ? "applied to the b2t runs only"
                                                 : "applied to every run";
  std::ofstream md(s.out + "/report.md");
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
     << "## Setup\n\n"
     << "Machine: " << study::machine_line() << ". Whole study: " << timing << ".\n\n"
     << "Training: " << study::describe(s) << ". Initialization `" << s.init
     << "`; the L^(-1/2) scaling of the block weights (`b2t_scaling`, model_init.hpp): " << scaling
     << " (`--b2t-scaling " << s.b2t_scaling << "`).\n\n"
     << "Reproduce with:\n\n```sh\n" << training::command_line("translate", arguments(s)) << "\n```\n\n"
     << "## Results\n\n"
     << summary_table(runs, baseline).markdown() << "\n"
     << "![validation loss](val_loss.svg)\n\n![training loss](train_loss.svg)\n\n"
     << "## Greedy decodings (first " << s.examples << " held-out sentences)\n\n"
     << decodings_markdown(runs);
  if (!md) throw std::runtime_error("cannot write " + s.out + "/report.md");
}

// --check: the outputs exist and hold sane values. Returns the failures (empty: all good).
std::vector<std::string> check_outputs(const std::vector<RunResult>& runs, const std::string& out) {
  std::vector<std::string> failures =
      study::check_files(out, {"report.md", "summary.csv", "curves.csv", "val_loss.svg", "train_loss.svg"});
  const std::vector<std::string> header = study::check_csv_header(out + "/summary.csv", kSummaryColumns);
  failures.insert(failures.end(), header.begin(), header.end());
  bool any_trained = false;
  for (const RunResult& r : runs) {
    const std::string name = r.placement + " L=" + std::to_string(r.layers) + ": ";
    if (r.diverged()) continue;
    any_trained = true;
    for (double v : r.train_loss)
      if (!std::isfinite(v)) failures.push_back(name + "non-finite training loss");
    if (!std::isfinite(r.val_loss.back())) failures.push_back(name + "non-finite validation loss");
    if (!(r.val_loss.back() < r.val_loss.front()))
      failures.push_back(name + "validation loss did not fall (" + study::fmt(r.val_loss.front()) + " -> " +
                         study::fmt(r.val_loss.back()) + ")");
    if (!(r.token_accuracy >= 0 && r.token_accuracy <= 1)) failures.push_back(name + "token accuracy out of [0, 1]");
    if (!(r.exact_match >= 0 && r.exact_match <= 1)) failures.push_back(name + "exact match out of [0, 1]");
  }
  if (!any_trained) failures.push_back("every run diverged");
  return failures;
}

}  // namespace

int main(int argc, char** argv) {
  Settings s;
  CLI::App app{"Study: Post-LN, Pre-LN and B2T encoder-decoders on a toy translation task, at several depths."};
  app.add_option("--placements", s.placements, "comma-separated placements: post, pre, b2t, deepnorm, rezero")
      ->delimiter(',')->check(CLI::IsMember({"post", "pre", "b2t", "deepnorm", "rezero"}));
  app.add_option("--layers", s.layers, "comma-separated depths, layers per side (encoder and decoder)")
      ->delimiter(',')->check(CLI::Range(1, 256));
  app.add_option("--d-model", s.d_model, "model width")->check(CLI::PositiveNumber);
  app.add_option("--heads", s.heads, "attention heads (must divide d-model)")->check(CLI::PositiveNumber);
  app.add_option("--d-ff", s.d_ff, "feed-forward width (0: 4·d-model)")->check(CLI::NonNegativeNumber);
  app.add_option("--activation", s.activation, "relu, gelu or gelu_tanh")->check(CLI::IsMember({"relu", "gelu", "gelu_tanh"}));
  app.add_option("--dropout", s.dropout, "dropout on sublayer outputs")->check(CLI::Range(0.0, 0.99));
  app.add_option("--init", s.init, "xavier, gpt2 or pytorch")->check(CLI::IsMember({"xavier", "gpt2", "pytorch"}));
  app.add_option("--b2t-scaling", s.b2t_scaling,
                 "scale the block weights by L^(-1/2) at init: off (the library default), b2t (the b2t runs only) or on (every run)")
      ->check(CLI::IsMember({"off", "b2t", "on"}));
  study::add_training_options(app, s);
  app.add_option("--batch", s.batch, "sentence pairs per step")->check(CLI::PositiveNumber);
  app.add_option("--eval-interval", s.eval_interval, "steps between validation losses")->check(CLI::PositiveNumber);
  app.add_option("--val-size", s.val_size, "held-out sentences (never in a training batch)")->check(CLI::Range(1, 5000));
  app.add_option("--examples", s.examples, "greedy decodings shown per run")->check(CLI::NonNegativeNumber);
  study::add_machinery_options(app, s, "tiny sizes and a few steps (options given explicitly still apply)",
                               "exit 1 unless the outputs exist, hold finite values and the loss fell");
  CLI11_PARSE(app, argc, argv);

  if (s.smoke) {  // tiny defaults for every option not given on the command line
    study::smoke_training(app, s);
    study::unless_given(app, "--layers", s.layers, std::vector<std::int64_t>{1, 2});
    study::unless_given(app, "--d-model", s.d_model, 16);
    study::unless_given(app, "--heads", s.heads, 2);
    study::unless_given(app, "--batch", s.batch, 16);
    study::unless_given(app, "--eval-interval", s.eval_interval, 10);
    study::unless_given(app, "--val-size", s.val_size, 32);
    study::unless_given(app, "--examples", s.examples, 2);
  }

  try {
    if (s.d_model % s.heads != 0)
      throw ValueError("--heads " + std::to_string(s.heads) + " must divide --d-model " + std::to_string(s.d_model));
    if (s.threads > 0) set_num_threads(static_cast<int>(s.threads));
    fs::create_directories(s.out);

    // ---- data shared by every run
    const TranslationData d(s.val_size, s.seed + 1);
    const double baseline = d.unigram_baseline(s.seed + 2);
    std::printf("translate: %zu placement(s) x %zu depth(s), %lld steps each, batch %lld, d_model %lld; %s\n",
                s.placements.size(), s.layers.size(), static_cast<long long>(s.steps), static_cast<long long>(s.batch),
                static_cast<long long>(s.d_model), study::machine_line().c_str());
    std::printf("vocabulary %lld words, %lld held-out sentences; unigram baseline %.4f nats/token\n",
                static_cast<long long>(d.task.vocab().size()), static_cast<long long>(s.val_size), baseline);

    // ---- the runs
    training::Progress progress(0, stdout);
    for (auto l : s.layers) progress.total += static_cast<double>(l * s.steps) * static_cast<double>(s.placements.size());
    std::vector<RunResult> runs;
    for (auto l : s.layers)
      for (const auto& p : s.placements) {
        runs.push_back(train_one(p, l, d, s, progress));
        const RunResult& r = runs.back();
        const std::string name = p + " L=" + std::to_string(l);
        if (r.diverged()) {
          progress.done += static_cast<double>((s.steps - r.steps_run) * l);  // the steps it will not run
          progress.line(name + " diverged at step " + std::to_string(r.diverged_at) + ": " + r.diverged_why);
          continue;
        }
        char line[160];
        std::snprintf(line, sizeof line, "%s: val loss %.4f, token accuracy %.3f, exact match %.3f, %.1f s", name.c_str(),
                      r.val_loss.back(), r.token_accuracy, r.exact_match, r.seconds);
        progress.line(line);
        for (const Decoding& e : r.decodings)
          std::printf("    %s\n      expected %s\n      greedy   %s  (%s)\n", e.source.c_str(), e.expected.c_str(),
                      e.decoded.c_str(), e.correct ? "exact" : "wrong");
      }

    // ---- outputs
    const std::string timing = progress.timing();
    const study::Table summary = summary_table(runs, baseline);
    summary.write_csv(s.out + "/summary.csv");
    curves_table(runs).write_csv(s.out + "/curves.csv");
    write_charts(runs, s);
    write_report(runs, s, baseline, timing);
    std::printf("\n%s\nwrote %s/report.md, summary.csv, curves.csv, val_loss.svg, train_loss.svg; whole study %s\n",
                summary.markdown().c_str(), s.out.c_str(), timing.c_str());
    if (s.check) {
      if (!study::print_problems(check_outputs(runs, s.out))) return 1;
      std::printf("translate: check passed\n");
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "translate: error: %s\n", e.what());
    return 1;
  }
  return 0;
}
