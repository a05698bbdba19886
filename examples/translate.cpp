// translate.cpp — study: does the norm placement decide whether a deep encoder-decoder trains?
//
// A Seq2SeqTransformer learns TranslationTask, a toy language pair (SVO English-like source,
// SOV target with case particles, a plural marker and object agreement), once per placement
// (Post-LN, Pre-LN, B2T) and depth (layers per side), with the same seed, initial weights
// drawn the same way, the same batches and the same held-out set:
//
//   post  y = LN(x + F(x))             the original Transformer; deep stacks are known to be hard
//   pre   y = x + F(LN(x))             trains deep stacks, ends each side with a final LN
//   b2t   post + the block input added before the block's last LN (Takase et al. 2022,
//         arXiv 2206.00330), whose paper compares exactly these three at 6 and 18 layers
//
// For each run it measures the validation loss (teacher-forced cross-entropy per target
// token), the token accuracy (teacher-forced argmax), the exact-match accuracy of greedy
// decoding on held-out sentences the training batches never contain, whether training
// diverged, and the wall time. It writes report.md, summary.csv, curves.csv and two loss-curve
// SVGs to --out, and prints a few greedy translations.
//
// Run:   build/examples/translate                        # defaults: a few minutes on 2 cores
//        build/examples/translate --placements pre,deepnorm --layers 12 --lr 5e-4 --steps 800
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
#include <thread>
#include <unistd.h>

#include "study/report.hpp"

using namespace tapegrad;
namespace fs = std::filesystem;

namespace {

struct Settings {
  std::string placements = "post,pre,b2t", layers = "6,18", out = "translate_out";
  std::int64_t d_model = 64, heads = 4, d_ff = 0, batch = 32, steps = 300, warmup = 30;
  std::int64_t eval_interval = 25, val_size = 256, examples = 3, threads = 0;
  double lr = 1e-3, min_lr_ratio = 0.1, weight_decay = 0.01, clip = 0.0, dropout = 0.0;
  std::string optimizer = "adamw", schedule = "cosine", init = "xavier", activation = "relu";
  std::string b2t_scaling = "auto";
  std::uint64_t seed = 1;
  bool smoke = false, check = false;
};

// ---------------------------------------------------------------- small helpers

std::vector<std::string> split_commas(const std::string& s) {
  std::vector<std::string> parts;
  std::stringstream in(s);
  for (std::string p; std::getline(in, p, ',');)
    if (!p.empty()) parts.push_back(p);
  return parts;
}

std::string clock_str(double seconds) {
  char buf[32];
  const long t = std::lround(std::max(seconds, 0.0));
  std::snprintf(buf, sizeof buf, "%ld:%02ld", t / 60, t % 60);
  return buf;
}

double mean_of_last(const std::vector<double>& v, std::size_t n) {
  if (v.empty()) return NAN;
  const std::size_t k = std::min(n, v.size());
  double total = 0;
  for (std::size_t i = v.size() - k; i < v.size(); ++i) total += v[i];
  return total / static_cast<double>(k);
}

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
  // prefix. A model that does not get below it has learned nothing useful.
  double unigram_baseline(std::uint64_t seed) const {
    std::vector<double> counts(task.vocab().size(), 1.0);  // add-one smoothing: no log(0)
    Generator gen(seed);
    for (const auto& p : train_batch(4000, gen)) {
      for (auto t : p.target) counts[t] += 1;
      counts[data::kEos] += 1;
    }
    double total = 0, nll = 0, n = 0;
    for (double c : counts) total += c;
    for (const auto& p : val) {
      for (auto t : p.target) nll -= std::log(counts[t] / total);
      nll -= std::log(counts[data::kEos] / total);
      n += static_cast<double>(p.target.size() + 1);
    }
    return nll / n;
  }
};

// ---------------------------------------------------------------- one run

struct Decoding {
  std::string source, expected, decoded;
  bool correct;
};

struct RunResult {
  std::string placement;
  std::int64_t layers = 0, parameters = 0, steps_run = 0;
  std::int64_t diverged_at = -1;  // the step whose loss or gradient was non-finite; -1: none
  std::string diverged_why;
  std::vector<double> train_loss, grad_norm, lr;  // one per step run
  std::vector<double> val_steps, val_loss;        // at step 0 and every eval interval
  double token_accuracy = NAN, exact_match = NAN, seconds = 0;
  std::vector<Decoding> decodings;

  bool diverged() const { return diverged_at >= 0; }
};

struct Eval {
  double loss, token_accuracy;
};

// Teacher-forced: the decoder reads the true prefix. Loss per target token (EOS included);
// a token counts as right when the argmax of its logits is the true token.
Eval evaluate(nn::Seq2SeqTransformer& model, const TranslationData& d, std::int64_t batch) {
  NoGradGuard no_grad;
  model.eval();
  double loss = 0, right = 0, count = 0;
  for (std::size_t i = 0; i < d.val.size(); i += batch) {
    const std::span<const data::SeqPair> chunk(d.val.data() + i, std::min<std::size_t>(batch, d.val.size() - i));
    const data::Seq2SeqBatch b = data::collate_seq2seq(chunk);
    const Tensor logits = model.forward(b.src, b.tgt_in, b.src_pad_mask, b.tgt_pad_mask);
    const std::int64_t n = b.tgt_out.numel();
    loss += cross_entropy(logits.reshape({n, -1}), b.tgt_out.reshape({n}), Reduction::sum).item();
    const auto predicted = argmax(logits, -1).to_vector<std::int64_t>();
    const auto target = b.tgt_out.to_vector<std::int64_t>();
    for (std::int64_t k = 0; k < n; ++k) {
      if (target[k] == data::kIgnoreIndex) continue;
      right += predicted[k] == target[k];
      count += 1;
    }
  }
  model.train();
  return {loss / count, right / count};
}

// Greedy decoding of every held-out source; exact when the words before the first EOS equal
// task.solve(source) and an EOS was produced. Keeps the first `keep` as examples.
double exact_match(nn::Seq2SeqTransformer& model, const TranslationData& d, std::int64_t batch, std::int64_t keep,
                   std::vector<Decoding>& examples) {
  const data::Vocab& vocab = d.task.vocab();
  const std::int64_t max_len = d.task.max_target_len() + 2;  // BOS, target, EOS
  double exact = 0;
  for (std::size_t i = 0; i < d.val.size(); i += batch) {
    const std::span<const data::SeqPair> chunk(d.val.data() + i, std::min<std::size_t>(batch, d.val.size() - i));
    const data::Seq2SeqBatch b = data::collate_seq2seq(chunk);
    const Tensor out = model.greedy_decode(b.src, data::kBos, data::kEos, max_len, b.src_pad_mask);
    const std::int64_t width = out.size(1);
    const auto tokens = out.to_vector<std::int64_t>();
    for (std::size_t r = 0; r < chunk.size(); ++r) {
      std::vector<std::int64_t> decoded;
      bool ended = false;
      for (std::int64_t t = 1; t < width && !ended; ++t) {  // t = 0 is BOS
        const std::int64_t tok = tokens[r * width + t];
        ended = tok == data::kEos;
        if (!ended) decoded.push_back(tok);
      }
      const std::vector<std::int64_t> expected = d.task.solve(chunk[r].source);
      const bool correct = ended && decoded == expected;
      exact += correct;
      if (static_cast<std::int64_t>(examples.size()) < keep)
        examples.push_back({vocab.join(chunk[r].source), vocab.join(expected), vocab.join(decoded), correct});
    }
  }
  return exact / static_cast<double>(d.val.size());
}

std::unique_ptr<optim::Optimizer> make_optimizer(const nn::Module& model, const Settings& s) {
  if (s.optimizer == "sgd")  // with momentum 0.9; weight decay on the decay group only
    return std::make_unique<optim::SGD>(
        optim::weight_decay_groups(model, optim::SGDOptions(s.lr).momentum(0.9).weight_decay(s.weight_decay)));
  // β₂ = 0.98 as in Vaswani et al. 2017
  const auto options = optim::AdamOptions(s.lr).betas(optim::Betas(0.9, 0.98)).weight_decay(s.weight_decay);
  if (s.optimizer == "adam") return std::make_unique<optim::Adam>(optim::weight_decay_groups(model, options));
  return std::make_unique<optim::AdamW>(optim::weight_decay_groups(model, options));
}

std::unique_ptr<optim::LRSchedule> make_schedule(optim::Optimizer& opt, const Settings& s) {
  const std::int64_t total = std::max<std::int64_t>(s.steps, 1);
  if (s.schedule == "cosine") return std::make_unique<optim::WarmupCosine>(opt, s.warmup, total, s.min_lr_ratio);
  if (s.schedule == "linear") return std::make_unique<optim::WarmupLinear>(opt, s.warmup, total, s.min_lr_ratio);
  if (s.schedule == "noam") return std::make_unique<optim::InverseSqrt>(opt, std::max<std::int64_t>(s.warmup, 1));
  return std::make_unique<optim::ConstantSchedule>(opt);
}

// Progress across all runs: the cost of a step grows with the depth, so the ETA counts
// layer-steps (steps × layers per side) still to do at the rate measured so far.
struct Progress {
  std::int64_t total_layer_steps = 0, done_layer_steps = 0;
  std::chrono::steady_clock::time_point start = std::chrono::steady_clock::now();
  bool tty = isatty(fileno(stdout));

  // On a terminal the line is redrawn every step; in a log only when `newline`.
  void show(const std::string& run, std::int64_t step, std::int64_t steps, double loss, double val, double gnorm,
            bool newline) {
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    const double eta = done_layer_steps ? seconds / double(done_layer_steps) * double(total_layer_steps - done_layer_steps) : 0;
    char line[256];
    std::snprintf(line, sizeof line, "%-10s step %lld/%lld  loss %.4f  val %.4f  |g| %.3g  ETA (all runs) %s", run.c_str(),
                  static_cast<long long>(step), static_cast<long long>(steps), loss, val, gnorm, clock_str(eta).c_str());
    if (tty) std::printf("\r\033[K%s%s", line, newline ? "\n" : "");
    else if (newline) std::printf("%s\n", line);
    std::fflush(stdout);
  }
};

RunResult train_one(const std::string& placement, std::int64_t layers, const TranslationData& d, const Settings& s,
                    Progress& progress) {
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
  if (s.b2t_scaling != "auto") config.b2t_scaling = s.b2t_scaling == "on";
  nn::Seq2SeqTransformer model(config);
  r.parameters = model.num_parameters();
  auto optimizer = make_optimizer(model, s);
  auto schedule = make_schedule(*optimizer, s);
  const nn::NamedTensors params = model.named_parameters();

  Generator batch_gen(s.seed ^ 0xba7c4ULL);  // the same batches for every run
  const std::string name = placement + " L=" + std::to_string(layers);
  r.val_steps.push_back(0);
  r.val_loss.push_back(evaluate(model, d, s.batch).loss);
  for (std::int64_t step = 0; step < s.steps; ++step) {
    schedule->apply(step);
    const data::Seq2SeqBatch b = data::collate_seq2seq(d.train_batch(s.batch, batch_gen));
    const Tensor logits = model.forward(b.src, b.tgt_in, b.src_pad_mask, b.tgt_pad_mask);
    const Tensor loss = cross_entropy(logits.reshape({-1, V}), b.tgt_out.reshape({-1}));
    optimizer->zero_grad();
    loss.backward();
    // Diverged: a NaN or Inf in the loss or any gradient. The run stops there.
    const optim::HealthReport health = optim::check_health(loss, params);
    if (!health.ok) {
      r.diverged_at = step + 1;
      r.diverged_why = health.message;
      break;
    }
    const double gnorm = s.clip > 0 ? optim::clip_grad_norm_(params, s.clip) : optim::grad_norm(params);
    optimizer->step();
    r.steps_run = step + 1;
    r.train_loss.push_back(loss.item());
    r.grad_norm.push_back(gnorm);
    r.lr.push_back(optimizer->lr(0));
    progress.done_layer_steps += layers;
    const bool eval_now = r.steps_run % s.eval_interval == 0 || r.steps_run == s.steps;
    if (eval_now) {
      const Eval e = evaluate(model, d, s.batch);
      r.val_steps.push_back(static_cast<double>(r.steps_run));
      r.val_loss.push_back(e.loss);
      r.token_accuracy = e.token_accuracy;  // the last one is the final one: the last step evaluates
      if (!std::isfinite(e.loss)) {  // finite gradients, but the update overflowed
        r.diverged_at = r.steps_run;
        r.diverged_why = "non-finite validation loss";
        break;
      }
    }
    const bool milestone = r.steps_run % 100 == 0 || r.steps_run == s.steps;
    if (milestone || progress.tty) progress.show(name, r.steps_run, s.steps, loss.item(), r.val_loss.back(), gnorm, milestone);
  }
  if (r.diverged()) r.token_accuracy = NAN;
  else r.exact_match = exact_match(model, d, s.batch, s.examples, r.decodings);
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return r;
}

// ---------------------------------------------------------------- report

// The settings as (option, value), in the order of --help: the command line that reproduces
// the run (with --smoke, the tiny values it chose).
std::vector<std::pair<std::string, std::string>> settings_list(const Settings& s) {
  auto num = [](double v) { return study::fmt(v, 6); };
  auto i = [](std::int64_t v) { return std::to_string(v); };
  return {{"--placements", s.placements}, {"--layers", s.layers},       {"--d-model", i(s.d_model)},
          {"--heads", i(s.heads)},        {"--d-ff", i(s.d_ff)},          {"--activation", s.activation},
          {"--dropout", num(s.dropout)},  {"--init", s.init},             {"--b2t-scaling", s.b2t_scaling},
          {"--optimizer", s.optimizer},
          {"--lr", num(s.lr)},            {"--weight-decay", num(s.weight_decay)},
          {"--schedule", s.schedule},     {"--warmup", i(s.warmup)},      {"--min-lr-ratio", num(s.min_lr_ratio)},
          {"--clip", num(s.clip)},        {"--batch", i(s.batch)},        {"--steps", i(s.steps)},
          {"--eval-interval", i(s.eval_interval)}, {"--val-size", i(s.val_size)},
          {"--examples", i(s.examples)},  {"--seed", std::to_string(s.seed)}, {"--threads", i(s.threads)}};
}

// What ran the study: threads, the BLAS kernels, the CPU (when /proc/cpuinfo says).
std::string machine_line() {
  std::string cpu = "unknown CPU";
  std::ifstream info("/proc/cpuinfo");
  for (std::string line; std::getline(info, line);)
    if (line.rfind("model name", 0) == 0 && line.find(':') != std::string::npos) {
      cpu = line.substr(line.find(':') + 2);
      break;
    }
  return cpu + ", " + std::to_string(get_num_threads()) + " thread(s) (" +
         std::to_string(std::thread::hardware_concurrency()) + " hardware threads), OpenBLAS kernels " + blas_core_name();
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
           status(r, baseline), r.diverged() ? std::to_string(r.diverged_at) : "", study::fmt(mean_of_last(r.train_loss, 20)),
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

void write_charts(const std::vector<RunResult>& runs, const std::string& out) {
  study::LineChart val, train;
  val.title = "Validation loss (teacher-forced, per target token)";
  train.title = "Training loss (exponential moving average, 0.9)";
  val.x_label = train.x_label = "step";
  val.y_label = train.y_label = "cross-entropy (nats, log scale)";
  val.log_y = train.log_y = true;
  for (const RunResult& r : runs) {
    const std::string name = r.placement + " L=" + std::to_string(r.layers);
    val.series.push_back({name, r.val_steps, r.val_loss});
    study::Series s{name, {}, {}};
    double ema = NAN;
    for (std::size_t i = 0; i < r.train_loss.size(); ++i) {
      ema = std::isnan(ema) ? r.train_loss[i] : 0.9 * ema + 0.1 * r.train_loss[i];
      s.x.push_back(static_cast<double>(i + 1));
      s.y.push_back(ema);
    }
    train.series.push_back(std::move(s));
  }
  val.write_svg(out + "/val_loss.svg");
  train.write_svg(out + "/train_loss.svg");
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

void write_report(const std::vector<RunResult>& runs, const Settings& s, double baseline, double seconds) {
  std::string command = "translate";
  for (const auto& [option, value] : settings_list(s)) command += " " + option + " " + value;

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
     << "Machine: " << machine_line() << ". Whole study: " << clock_str(seconds) << " (m:ss).\n\n"
     << "Initialization `" << s.init << "`; B2T's L^(-1/2) scaling of the block weights (model_init.hpp): "
     << (s.b2t_scaling == "auto" ? "applied to the b2t runs only" : s.b2t_scaling == "on" ? "applied to every run" : "off")
     << " (`--b2t-scaling " << s.b2t_scaling << "`).\n\n"
     << "Reproduce with:\n\n```\n" << command << "\n```\n\n"
     << "## Results\n\n"
     << summary_table(runs, baseline).markdown() << "\n"
     << "![validation loss](val_loss.svg)\n\n![training loss](train_loss.svg)\n\n"
     << "## Greedy decodings (first " << s.examples << " held-out sentences)\n\n"
     << decodings_markdown(runs);
  if (!md) throw std::runtime_error("cannot write " + s.out + "/report.md");
}

// --check: the outputs exist and hold sane values. Returns the failures (empty: all good).
std::vector<std::string> check_outputs(const std::vector<RunResult>& runs, const std::string& out) {
  std::vector<std::string> failures;
  for (const char* f : {"report.md", "summary.csv", "curves.csv", "val_loss.svg", "train_loss.svg"})
    if (!fs::exists(out + "/" + f) || fs::file_size(out + "/" + f) == 0)
      failures.push_back(std::string("missing or empty: ") + f);
  std::ifstream csv(out + "/summary.csv");
  std::string header;
  std::getline(csv, header);
  std::string expected;
  for (const auto& c : kSummaryColumns) expected += (expected.empty() ? "" : ",") + c;
  if (header != expected) failures.push_back("summary.csv header is '" + header + "', expected '" + expected + "'");
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
  app.add_option("--placements", s.placements, "comma-separated placements: post, pre, b2t, deepnorm, rezero");
  app.add_option("--layers", s.layers, "comma-separated depths, layers per side (encoder and decoder)");
  app.add_option("--d-model", s.d_model, "model width")->check(CLI::PositiveNumber);
  app.add_option("--heads", s.heads, "attention heads (must divide d-model)")->check(CLI::PositiveNumber);
  app.add_option("--d-ff", s.d_ff, "feed-forward width (0: 4·d-model)")->check(CLI::NonNegativeNumber);
  app.add_option("--activation", s.activation, "relu, gelu or gelu_tanh")->check(CLI::IsMember({"relu", "gelu", "gelu_tanh"}));
  app.add_option("--dropout", s.dropout, "dropout on sublayer outputs")->check(CLI::Range(0.0, 0.99));
  app.add_option("--init", s.init, "xavier, gpt2 or pytorch")->check(CLI::IsMember({"xavier", "gpt2", "pytorch"}));
  app.add_option("--b2t-scaling", s.b2t_scaling, "scale block weights by L^(-1/2): auto (for b2t only), on or off")
      ->check(CLI::IsMember({"auto", "on", "off"}));
  app.add_option("--optimizer", s.optimizer, "adamw, adam or sgd (momentum 0.9)")->check(CLI::IsMember({"adamw", "adam", "sgd"}));
  app.add_option("--lr", s.lr, "peak learning rate")->check(CLI::PositiveNumber);
  app.add_option("--weight-decay", s.weight_decay, "weight decay (decoupled for adamw)")->check(CLI::NonNegativeNumber);
  app.add_option("--schedule", s.schedule, "cosine, linear, constant or noam")
      ->check(CLI::IsMember({"cosine", "linear", "constant", "noam"}));
  app.add_option("--warmup", s.warmup, "warmup steps")->check(CLI::NonNegativeNumber);
  app.add_option("--min-lr-ratio", s.min_lr_ratio, "final lr / peak lr for cosine and linear")->check(CLI::Range(0.0, 1.0));
  app.add_option("--clip", s.clip, "gradient clipping max norm (0: off)")->check(CLI::NonNegativeNumber);
  app.add_option("--batch", s.batch, "sentence pairs per step")->check(CLI::PositiveNumber);
  app.add_option("--steps", s.steps, "optimizer steps per run")->check(CLI::PositiveNumber);
  app.add_option("--eval-interval", s.eval_interval, "steps between validation losses")->check(CLI::PositiveNumber);
  app.add_option("--val-size", s.val_size, "held-out sentences (never in a training batch)")->check(CLI::Range(1, 5000));
  app.add_option("--examples", s.examples, "greedy decodings shown per run")->check(CLI::NonNegativeNumber);
  app.add_option("--seed", s.seed, "seed of the initialization, the batches and the held-out set");
  app.add_option("--threads", s.threads, "threads for OpenMP and OpenBLAS (0: TAPEGRAD_NUM_THREADS or all)")
      ->check(CLI::NonNegativeNumber);
  app.add_option("--out", s.out, "folder for report.md, summary.csv, curves.csv and the SVG charts");
  app.add_flag("--smoke", s.smoke, "tiny sizes and a few steps (options given explicitly still apply)");
  app.add_flag("--check", s.check, "exit 1 unless the outputs exist, hold finite values and the loss fell");
  CLI11_PARSE(app, argc, argv);

  if (s.smoke) {  // tiny defaults for every option not given on the command line
    auto tiny = [&](const char* option, auto& value, auto small) {
      if (app.count(option) == 0) value = small;
    };
    tiny("--layers", s.layers, std::string("1,2"));
    tiny("--d-model", s.d_model, 16);
    tiny("--heads", s.heads, 2);
    tiny("--batch", s.batch, 16);
    tiny("--steps", s.steps, 30);
    tiny("--warmup", s.warmup, 5);
    tiny("--lr", s.lr, 3e-3);
    tiny("--eval-interval", s.eval_interval, 10);
    tiny("--val-size", s.val_size, 32);
    tiny("--examples", s.examples, 2);
  }

  try {
    // ---- the lists, checked before any training
    const std::vector<std::string> placements = split_commas(s.placements);
    if (placements.empty()) throw ValueError("--placements: empty list");
    for (const auto& p : placements) {
      if (p == "none") throw ValueError("--placements: 'none' has no residual stream to study here");
      try {
        nn::placement_from_name(p);
      } catch (const std::exception&) {
        throw ValueError("--placements: unknown placement '" + p + "' (expected post, pre, b2t, deepnorm or rezero)");
      }
    }
    std::vector<std::int64_t> depths;
    for (const auto& l : split_commas(s.layers)) {
      char* end = nullptr;
      const long long v = std::strtoll(l.c_str(), &end, 10);
      if (*end != '\0' || v < 1 || v > 256) throw ValueError("--layers: '" + l + "' is not a depth in 1..256");
      depths.push_back(v);
    }
    if (depths.empty()) throw ValueError("--layers: empty list");
    if (s.d_model % s.heads != 0)
      throw ValueError("--heads " + std::to_string(s.heads) + " must divide --d-model " + std::to_string(s.d_model));
    if (s.warmup >= s.steps) {  // as train_lm: a run shorter than the warmup warms up over its first tenth
      std::printf("--warmup %lld is not below --steps %lld: using %lld\n", static_cast<long long>(s.warmup),
                  static_cast<long long>(s.steps), static_cast<long long>(s.steps / 10));
      s.warmup = s.steps / 10;
    }
    if (s.threads > 0) set_num_threads(static_cast<int>(s.threads));
    fs::create_directories(s.out);

    // ---- data shared by every run
    const TranslationData d(s.val_size, s.seed + 1);
    const double baseline = d.unigram_baseline(s.seed + 2);
    std::printf("translate: %zu placement(s) x %zu depth(s), %lld steps each, batch %lld, d_model %lld; %s\n",
                placements.size(), depths.size(), static_cast<long long>(s.steps), static_cast<long long>(s.batch),
                static_cast<long long>(s.d_model), machine_line().c_str());
    std::printf("vocabulary %lld words, %lld held-out sentences; unigram baseline %.4f nats/token\n",
                static_cast<long long>(d.task.vocab().size()), static_cast<long long>(s.val_size), baseline);

    // ---- the runs
    Progress progress;
    for (auto l : depths) progress.total_layer_steps += l * s.steps * static_cast<std::int64_t>(placements.size());
    std::vector<RunResult> runs;
    for (auto l : depths)
      for (const auto& p : placements) {
        runs.push_back(train_one(p, l, d, s, progress));
        const RunResult& r = runs.back();
        if (r.diverged()) {
          progress.done_layer_steps += (s.steps - r.steps_run) * l;  // the steps it will not run
          std::printf("%s%s L=%lld diverged at step %lld: %s\n", progress.tty ? "\r\033[K" : "", p.c_str(),
                      static_cast<long long>(l), static_cast<long long>(r.diverged_at), r.diverged_why.c_str());
        } else {
          std::printf("%s%s L=%lld: val loss %.4f, token accuracy %.3f, exact match %.3f, %.1f s\n",
                      progress.tty ? "\r\033[K" : "", p.c_str(), static_cast<long long>(l), r.val_loss.back(),
                      r.token_accuracy, r.exact_match, r.seconds);
          for (const Decoding& e : r.decodings)
            std::printf("    %s\n      expected %s\n      greedy   %s  (%s)\n", e.source.c_str(), e.expected.c_str(),
                        e.decoded.c_str(), e.correct ? "exact" : "wrong");
        }
      }
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - progress.start).count();

    // ---- outputs
    summary_table(runs, baseline).write_csv(s.out + "/summary.csv");
    curves_table(runs).write_csv(s.out + "/curves.csv");
    write_charts(runs, s.out);
    write_report(runs, s, baseline, seconds);
    std::printf("\n%s\nwrote %s/report.md, summary.csv, curves.csv, val_loss.svg, train_loss.svg (%s m:ss)\n",
                summary_table(runs, baseline).markdown().c_str(), s.out.c_str(), clock_str(seconds).c_str());

    if (s.check) {
      const std::vector<std::string> failures = check_outputs(runs, s.out);
      for (const auto& f : failures) std::printf("check failed: %s\n", f.c_str());
      if (!failures.empty()) return 1;
      std::printf("translate: check passed\n");
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "translate: error: %s\n", e.what());
    return 1;
  }
  return 0;
}
