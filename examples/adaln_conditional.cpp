// adaln_conditional.cpp — study: two ways to tell one model which task to do.
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
#include <tapegrad/tapegrad.hpp>

#include <CLI/CLI.hpp>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>
#include <unistd.h>

#include "study/report.hpp"

using namespace tapegrad;
namespace fs = std::filesystem;

namespace {

struct Settings {
  std::string tasks = "copy,reverse,sort", out = "adaln_out";
  std::int64_t symbols = 8, min_len = 1, max_len = 8;
  std::int64_t layers = 2, d_model = 64, heads = 4, batch = 32, steps = 2000, warmup = 100;
  std::int64_t eval_interval = 100, val_per_task = 128, examples = 2, threads = 0;
  double lr = 2e-3, min_lr_ratio = 0.1, weight_decay = 0.01, clip = 1.0;
  std::string optimizer = "adamw", schedule = "cosine", init = "gpt2";
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

// ---------------------------------------------------------------- data

// One row: which task, and its (source, answer) pair.
struct Example {
  std::int64_t task;
  data::SeqPair pair;
};

struct TaskMix {
  std::vector<std::unique_ptr<data::SymbolTask>> tasks;  // all over the same symbols

  TaskMix(const std::vector<std::string>& names, const Settings& s) {
    for (const auto& n : names) {
      if (n == "copy") tasks.push_back(std::make_unique<data::CopyTask>(s.symbols, s.min_len, s.max_len));
      else if (n == "reverse") tasks.push_back(std::make_unique<data::ReverseTask>(s.symbols, s.min_len, s.max_len));
      else if (n == "sort") tasks.push_back(std::make_unique<data::SortTask>(s.symbols, s.min_len, s.max_len));
      else throw ValueError("--tasks: unknown task '" + n + "' (expected copy, reverse or sort)");
    }
  }
  std::int64_t size() const { return static_cast<std::int64_t>(tasks.size()); }
  const data::Vocab& vocab() const { return tasks[0]->vocab(); }

  // n rows, each from a task drawn uniformly.
  std::vector<Example> sample(std::int64_t n, Generator& gen) const {
    std::vector<Example> rows;
    for (std::int64_t i = 0; i < n; ++i) {
      const auto t = static_cast<std::int64_t>(gen.next_below(tasks.size()));
      rows.push_back({t, tasks[t]->sample(gen)});
    }
    return rows;
  }
};

// How a variant shows the task to the model.
struct Variant {
  std::string name;
  bool adaln;  // true: classes to forward(); false: a task token before the source

  // collate_lm's pairs: with a task token, source = <task> source. Task tokens follow the
  // task vocabulary: id V + task.
  std::vector<data::SeqPair> pairs(std::span<const Example> rows, std::int64_t V) const {
    std::vector<data::SeqPair> out;
    for (const Example& e : rows) {
      data::SeqPair p = e.pair;
      if (!adaln) p.source.insert(p.source.begin(), V + e.task);
      out.push_back(std::move(p));
    }
    return out;
  }
  Tensor classes(std::span<const Example> rows) const {
    if (!adaln) return Tensor();
    std::vector<std::int64_t> ids;
    for (const Example& e : rows) ids.push_back(e.task);
    return Tensor::from_vector(ids, {static_cast<std::int64_t>(ids.size())});
  }
};

std::shared_ptr<nn::TransformerLM> make_model(const Variant& v, const TaskMix& mix, const Settings& s) {
  nn::TransformerLMConfig c;
  c.vocab_size = mix.vocab().size() + (v.adaln ? 0 : mix.size());
  c.max_seq_len = 2 * s.max_len + 4;  // BOS <task> source SEP answer (the inputs drop the final EOS)
  c.n_layers = s.layers;
  c.block.d_model = s.d_model;
  c.block.n_heads = s.heads;
  c.block.activation = nn::Activation::gelu_tanh;
  c.block.placement = nn::Placement::pre;  // AdaLN-Zero is defined for pre only
  c.block.norm = v.adaln ? nn::NormKind::adaln_zero : nn::NormKind::layernorm;
  c.n_classes = v.adaln ? mix.size() : 0;
  c.init = nn::init_scheme_from_name(s.init);
  manual_seed(s.seed);  // the same initial draws for both variants, where their shapes agree
  return std::make_shared<nn::TransformerLM>(c);
}

// ---------------------------------------------------------------- one run

struct TaskEval {
  double loss = NAN, token_accuracy = NAN, exact_match = NAN;
};

struct Generation {
  std::string task, source, expected, generated;
  bool correct;
};

struct RunResult {
  Variant variant;
  std::int64_t parameters = 0, steps_run = 0;
  std::int64_t diverged_at = -1;  // the step whose loss or gradient was non-finite; -1: none
  std::string diverged_why;
  std::vector<double> train_loss;                   // one per step run
  std::vector<double> val_steps;                    // at step 0 and every eval interval
  std::vector<std::vector<double>> val_loss;        // [eval][task]
  std::vector<TaskEval> final_eval;                 // per task
  std::vector<Generation> generations;
  double seconds = 0;

  bool diverged() const { return diverged_at >= 0; }
};

// Teacher-forced, on each task's held-out rows: loss per answer token (EOS included), token
// accuracy, and the share of rows whose answer tokens are all the argmax.
std::vector<TaskEval> evaluate(nn::TransformerLM& model, const Variant& v, const std::vector<std::vector<Example>>& val,
                               std::int64_t V, std::int64_t batch) {
  NoGradGuard no_grad;
  model.eval();
  std::vector<TaskEval> result;
  for (const auto& rows : val) {
    double loss = 0, right = 0, count = 0, exact = 0;
    for (std::size_t i = 0; i < rows.size(); i += batch) {
      const std::span<const Example> chunk(rows.data() + i, std::min<std::size_t>(batch, rows.size() - i));
      const data::LMBatch b = data::collate_lm(v.pairs(chunk, V));
      const Tensor logits = model.forward(b.inputs, v.classes(chunk));
      const std::int64_t n = b.targets.numel(), T = b.targets.size(1);
      loss += cross_entropy(logits.reshape({n, -1}), b.targets.reshape({n}), Reduction::sum).item();
      const auto predicted = argmax(logits, -1).to_vector<std::int64_t>();
      const auto target = b.targets.to_vector<std::int64_t>();
      for (std::size_t r = 0; r < chunk.size(); ++r) {
        bool all_right = true;
        for (std::int64_t t = 0; t < T; ++t) {
          const std::size_t k = r * T + t;
          if (target[k] == data::kIgnoreIndex) continue;
          right += predicted[k] == target[k];
          all_right = all_right && predicted[k] == target[k];
          count += 1;
        }
        exact += all_right;
      }
    }
    result.push_back({loss / count, right / count, exact / static_cast<double>(rows.size())});
  }
  model.train();
  return result;
}

// Greedy generation (temperature 0) of the first `n` held-out rows of each task, as words.
std::vector<Generation> generate_examples(nn::TransformerLM& model, const Variant& v, const TaskMix& mix,
                                          const std::vector<std::vector<Example>>& val, std::int64_t n) {
  const data::Vocab& vocab = mix.vocab();
  std::vector<Generation> out;
  for (std::size_t t = 0; t < val.size(); ++t)
    for (std::int64_t i = 0; i < std::min<std::int64_t>(n, static_cast<std::int64_t>(val[t].size())); ++i) {
      const std::span<const Example> row(&val[t][i], 1);
      const data::SeqPair p = v.pairs(row, vocab.size())[0];
      std::vector<std::int64_t> prompt = {data::kBos};
      prompt.insert(prompt.end(), p.source.begin(), p.source.end());
      prompt.push_back(data::kSep);
      const auto T = static_cast<std::int64_t>(prompt.size());
      nn::GenerateOptions greedy;
      greedy.temperature = 0;
      const Tensor seq = model.generate(Tensor::from_vector(prompt, {1, T}), static_cast<std::int64_t>(p.target.size()) + 1,
                                        greedy, v.classes(row));
      const auto tokens = seq.to_vector<std::int64_t>();
      std::vector<std::int64_t> answer;
      bool ended = false;
      for (std::size_t k = T; k < tokens.size() && !ended; ++k) {
        ended = tokens[k] == data::kEos;
        if (!ended) answer.push_back(tokens[k] < vocab.size() ? tokens[k] : data::kPad);  // a task token: show <pad>
      }
      out.push_back({mix.tasks[t]->name(), vocab.join(val[t][i].pair.source), vocab.join(p.target), vocab.join(answer),
                     ended && answer == p.target});
    }
  return out;
}

std::unique_ptr<optim::Optimizer> make_optimizer(const nn::Module& model, const Settings& s) {
  if (s.optimizer == "sgd")  // with momentum 0.9; weight decay on the decay group only
    return std::make_unique<optim::SGD>(
        optim::weight_decay_groups(model, optim::SGDOptions(s.lr).momentum(0.9).weight_decay(s.weight_decay)));
  const auto options = optim::AdamOptions(s.lr).betas(optim::Betas(0.9, 0.95)).weight_decay(s.weight_decay);
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

double mean_loss(const std::vector<double>& per_task) {
  double total = 0;
  for (double v : per_task) total += v;
  return total / static_cast<double>(per_task.size());
}

RunResult train_one(const Variant& v, const TaskMix& mix, const std::vector<std::vector<Example>>& val,
                    const Settings& s, std::int64_t runs_left) {
  RunResult r;
  r.variant = v;
  const auto start = std::chrono::steady_clock::now();
  auto model = make_model(v, mix, s);
  r.parameters = model->num_parameters();
  auto optimizer = make_optimizer(*model, s);
  auto schedule = make_schedule(*optimizer, s);
  const nn::NamedTensors params = model->named_parameters();
  const std::int64_t V = mix.vocab().size(), model_V = model->config.vocab_size;
  const bool tty = isatty(fileno(stdout));

  auto eval_now = [&](std::int64_t step) {
    std::vector<double> losses;
    for (const TaskEval& e : evaluate(*model, v, val, V, s.batch)) losses.push_back(e.loss);
    r.val_steps.push_back(static_cast<double>(step));
    r.val_loss.push_back(losses);
  };
  eval_now(0);
  Generator batch_gen(s.seed ^ 0xba7c4ULL);  // the same rows for both variants
  for (std::int64_t step = 0; step < s.steps; ++step) {
    schedule->apply(step);
    const std::vector<Example> rows = mix.sample(s.batch, batch_gen);
    const data::LMBatch b = data::collate_lm(v.pairs(rows, V));
    const Tensor logits = model->forward(b.inputs, v.classes(rows));
    const Tensor loss = cross_entropy(logits.reshape({-1, model_V}), b.targets.reshape({-1}));
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
    const bool evaluate_now = r.steps_run % s.eval_interval == 0 || r.steps_run == s.steps;
    if (evaluate_now) eval_now(r.steps_run);
    // Progress: on a terminal every step, in a log every 100 steps. The ETA assumes the runs
    // left cost what this one does per step.
    const bool milestone = r.steps_run % 100 == 0 || r.steps_run == s.steps;
    if (milestone || tty) {
      const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      const double eta = elapsed / double(r.steps_run) * double(s.steps - r.steps_run + runs_left * s.steps);
      std::printf("%s%-11s step %lld/%lld  loss %.4f  val (mean over tasks) %.4f  |g| %.3g  ETA (all runs) %s%s",
                  tty ? "\r\033[K" : "", v.name.c_str(), static_cast<long long>(r.steps_run),
                  static_cast<long long>(s.steps), loss.item(), mean_loss(r.val_loss.back()), gnorm,
                  clock_str(eta).c_str(), milestone ? "\n" : "");
      std::fflush(stdout);
    }
  }
  if (!r.diverged()) {
    r.final_eval = evaluate(*model, v, val, V, s.batch);
    r.generations = generate_examples(*model, v, mix, val, s.examples);
  }
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return r;
}

// ---------------------------------------------------------------- report

// The settings as (option, value), in the order of --help: the command line that reproduces
// the run (with --smoke, the tiny values it chose).
std::vector<std::pair<std::string, std::string>> settings_list(const Settings& s) {
  auto num = [](double v) { return study::fmt(v, 6); };
  auto i = [](std::int64_t v) { return std::to_string(v); };
  return {{"--tasks", s.tasks},          {"--symbols", i(s.symbols)},    {"--min-len", i(s.min_len)},
          {"--max-len", i(s.max_len)},   {"--layers", i(s.layers)},      {"--d-model", i(s.d_model)},
          {"--heads", i(s.heads)},       {"--init", s.init},             {"--optimizer", s.optimizer},
          {"--lr", num(s.lr)},           {"--weight-decay", num(s.weight_decay)},
          {"--schedule", s.schedule},    {"--warmup", i(s.warmup)},      {"--min-lr-ratio", num(s.min_lr_ratio)},
          {"--clip", num(s.clip)},       {"--batch", i(s.batch)},        {"--steps", i(s.steps)},
          {"--eval-interval", i(s.eval_interval)}, {"--val-per-task", i(s.val_per_task)},
          {"--examples", i(s.examples)}, {"--seed", std::to_string(s.seed)}, {"--threads", i(s.threads)}};
}

const std::vector<std::string> kSummaryColumns = {"variant", "task", "parameters", "steps_run", "diverged_at_step",
                                                  "final_train_loss", "val_loss", "token_accuracy", "exact_match",
                                                  "seconds"};

// One row per variant and task, then the variant's mean over tasks ("all"; nan if it diverged).
study::Table summary_table(const std::vector<RunResult>& runs, const TaskMix& mix) {
  study::Table t(kSummaryColumns);
  for (const RunResult& r : runs) {
    auto add = [&](const std::string& task, const TaskEval& e) {
      t.add({r.variant.name, task, std::to_string(r.parameters), std::to_string(r.steps_run),
             r.diverged() ? std::to_string(r.diverged_at) : "", study::fmt(mean_of_last(r.train_loss, 20)),
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

void write_charts(const std::vector<RunResult>& runs, const TaskMix& mix, const std::string& out) {
  study::LineChart val, train;
  val.title = "Validation loss on the answer tokens, per task";
  train.title = "Training loss (exponential moving average, 0.9)";
  val.x_label = train.x_label = "step";
  val.y_label = train.y_label = "cross-entropy (nats, log scale)";
  val.log_y = train.log_y = true;
  for (const RunResult& r : runs) {
    for (std::int64_t k = 0; k < mix.size(); ++k) {
      study::Series s{r.variant.name + " " + mix.tasks[k]->name(), r.val_steps, {}};
      for (const auto& losses : r.val_loss) s.y.push_back(losses[k]);
      val.series.push_back(std::move(s));
    }
    study::Series s{r.variant.name, {}, {}};
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

void write_report(const std::vector<RunResult>& runs, const TaskMix& mix, const Settings& s, double seconds) {
  std::string command = "adaln_conditional";
  for (const auto& [option, value] : settings_list(s)) command += " " + option + " " + value;
  std::ofstream md(s.out + "/report.md");
  md << "# One model, several tasks: AdaLN-Zero conditioning vs a task token\n\n"
     << "A decoder-only `TransformerLM` (" << s.layers << " layers, d_model " << s.d_model
     << ", Pre-LN) trained on a mix of the tasks " << s.tasks << " over " << s.symbols << " symbols, lengths "
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
     << "## Setup\n\n"
     << "Machine: " << machine_line() << ". Whole study: " << clock_str(seconds) << " (m:ss).\n\n"
     << "Reproduce with:\n\n```\n" << command << "\n```\n\n"
     << "## Results\n\n"
     << summary_table(runs, mix).markdown() << "\n"
     << "![validation loss per task](val_loss.svg)\n\n![training loss](train_loss.svg)\n\n"
     << "## Greedy generations (first " << s.examples << " held-out rows per task)\n\n";
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
  if (!md) throw std::runtime_error("cannot write " + s.out + "/report.md");
}

// --check: the outputs exist and hold sane values. Returns the failures (empty: all good).
std::vector<std::string> check_outputs(const std::vector<RunResult>& runs, const std::string& out) {
  std::vector<std::string> failures;
  for (const char* f : {"report.md", "summary.csv", "curves.csv", "val_loss.svg", "train_loss.svg"})
    if (!fs::exists(out + "/" + f) || fs::file_size(out + "/" + f) == 0)
      failures.push_back(std::string("missing or empty: ") + f);
  std::ifstream csv(out + "/summary.csv");
  std::string header, expected;
  std::getline(csv, header);
  for (const auto& c : kSummaryColumns) expected += (expected.empty() ? "" : ",") + c;
  if (header != expected) failures.push_back("summary.csv header is '" + header + "', expected '" + expected + "'");
  for (const RunResult& r : runs) {
    const std::string name = r.variant.name + ": ";
    if (r.diverged()) {
      failures.push_back(name + "diverged at step " + std::to_string(r.diverged_at));
      continue;
    }
    for (double v : r.train_loss)
      if (!std::isfinite(v)) failures.push_back(name + "non-finite training loss");
    const double first = mean_loss(r.val_loss.front()), last = mean_loss(r.val_loss.back());
    if (!(last < first))
      failures.push_back(name + "validation loss did not fall (" + study::fmt(first) + " -> " + study::fmt(last) + ")");
    for (const TaskEval& e : r.final_eval) {
      if (!std::isfinite(e.loss)) failures.push_back(name + "non-finite validation loss");
      if (!(e.token_accuracy >= 0 && e.token_accuracy <= 1)) failures.push_back(name + "token accuracy out of [0, 1]");
      if (!(e.exact_match >= 0 && e.exact_match <= 1)) failures.push_back(name + "exact match out of [0, 1]");
    }
  }
  return failures;
}

}  // namespace

int main(int argc, char** argv) {
  Settings s;
  CLI::App app{"Study: one transformer for several tasks, told the task by AdaLN-Zero conditioning or by a task token."};
  app.add_option("--tasks", s.tasks, "comma-separated tasks, one class each: copy, reverse, sort");
  app.add_option("--symbols", s.symbols, "distinct symbols in the sequences")->check(CLI::Range(2, 1000));
  app.add_option("--min-len", s.min_len, "shortest source")->check(CLI::PositiveNumber);
  app.add_option("--max-len", s.max_len, "longest source")->check(CLI::PositiveNumber);
  app.add_option("--layers", s.layers, "transformer blocks")->check(CLI::Range(1, 256));
  app.add_option("--d-model", s.d_model, "model width")->check(CLI::PositiveNumber);
  app.add_option("--heads", s.heads, "attention heads (must divide d-model)")->check(CLI::PositiveNumber);
  app.add_option("--init", s.init, "gpt2, pytorch or xavier")->check(CLI::IsMember({"gpt2", "pytorch", "xavier"}));
  app.add_option("--optimizer", s.optimizer, "adamw, adam or sgd (momentum 0.9)")->check(CLI::IsMember({"adamw", "adam", "sgd"}));
  app.add_option("--lr", s.lr, "peak learning rate")->check(CLI::PositiveNumber);
  app.add_option("--weight-decay", s.weight_decay, "weight decay (decoupled for adamw)")->check(CLI::NonNegativeNumber);
  app.add_option("--schedule", s.schedule, "cosine, linear, constant or noam")
      ->check(CLI::IsMember({"cosine", "linear", "constant", "noam"}));
  app.add_option("--warmup", s.warmup, "warmup steps")->check(CLI::NonNegativeNumber);
  app.add_option("--min-lr-ratio", s.min_lr_ratio, "final lr / peak lr for cosine and linear")->check(CLI::Range(0.0, 1.0));
  app.add_option("--clip", s.clip, "gradient clipping max norm (0: off)")->check(CLI::NonNegativeNumber);
  app.add_option("--batch", s.batch, "rows per step")->check(CLI::PositiveNumber);
  app.add_option("--steps", s.steps, "optimizer steps per variant")->check(CLI::PositiveNumber);
  app.add_option("--eval-interval", s.eval_interval, "steps between validation losses")->check(CLI::PositiveNumber);
  app.add_option("--val-per-task", s.val_per_task, "held-out rows per task")->check(CLI::Range(1, 5000));
  app.add_option("--examples", s.examples, "greedy generations shown per task and variant")->check(CLI::NonNegativeNumber);
  app.add_option("--seed", s.seed, "seed of the initialization, the batches and the held-out rows");
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
    tiny("--symbols", s.symbols, 4);
    tiny("--max-len", s.max_len, 4);
    tiny("--layers", s.layers, 1);
    tiny("--d-model", s.d_model, 16);
    tiny("--heads", s.heads, 2);
    tiny("--batch", s.batch, 16);
    tiny("--steps", s.steps, 30);
    tiny("--warmup", s.warmup, 5);
    tiny("--lr", s.lr, 3e-3);
    tiny("--eval-interval", s.eval_interval, 10);
    tiny("--val-per-task", s.val_per_task, 16);
    tiny("--examples", s.examples, 1);
  }

  try {
    if (s.min_len > s.max_len)
      throw ValueError("--min-len " + std::to_string(s.min_len) + " is above --max-len " + std::to_string(s.max_len));
    if (s.d_model % s.heads != 0)
      throw ValueError("--heads " + std::to_string(s.heads) + " must divide --d-model " + std::to_string(s.d_model));
    const std::vector<std::string> names = split_commas(s.tasks);
    if (names.empty()) throw ValueError("--tasks: empty list");
    const TaskMix mix(names, s);
    if (s.warmup >= s.steps) {  // as train_lm: a run shorter than the warmup warms up over its first tenth
      std::printf("--warmup %lld is not below --steps %lld: using %lld\n", static_cast<long long>(s.warmup),
                  static_cast<long long>(s.steps), static_cast<long long>(s.steps / 10));
      s.warmup = s.steps / 10;
    }
    if (s.threads > 0) set_num_threads(static_cast<int>(s.threads));
    fs::create_directories(s.out);

    // The held-out rows, per task, from their own seed.
    std::vector<std::vector<Example>> val(mix.size());
    Generator val_gen(s.seed + 1);
    for (std::int64_t t = 0; t < mix.size(); ++t)
      for (const auto& p : mix.tasks[t]->sample(s.val_per_task, val_gen)) val[t].push_back({t, p});
    std::printf("adaln_conditional: tasks %s over %lld symbols, lengths %lld..%lld; %lld layers, d_model %lld, %lld "
                "steps per variant, batch %lld; %s\n",
                s.tasks.c_str(), static_cast<long long>(s.symbols), static_cast<long long>(s.min_len),
                static_cast<long long>(s.max_len), static_cast<long long>(s.layers), static_cast<long long>(s.d_model),
                static_cast<long long>(s.steps), static_cast<long long>(s.batch), machine_line().c_str());

    const auto start = std::chrono::steady_clock::now();
    const std::vector<Variant> variants = {{"adaln_zero", true}, {"task_token", false}};
    std::vector<RunResult> runs;
    for (std::size_t i = 0; i < variants.size(); ++i) {
      runs.push_back(train_one(variants[i], mix, val, s, static_cast<std::int64_t>(variants.size() - i - 1)));
      const RunResult& r = runs.back();
      if (r.diverged()) {
        std::printf("%s diverged at step %lld: %s\n", r.variant.name.c_str(), static_cast<long long>(r.diverged_at),
                    r.diverged_why.c_str());
        continue;
      }
      std::printf("%s: %lld parameters, %.1f s\n", r.variant.name.c_str(), static_cast<long long>(r.parameters), r.seconds);
      for (std::int64_t t = 0; t < mix.size(); ++t)
        std::printf("    %-8s val loss %.4f  token accuracy %.3f  exact match %.3f\n", mix.tasks[t]->name().c_str(),
                    r.final_eval[t].loss, r.final_eval[t].token_accuracy, r.final_eval[t].exact_match);
      for (const Generation& g : r.generations)
        std::printf("    [%s] %s -> %s  (expected %s, %s)\n", g.task.c_str(), g.source.c_str(), g.generated.c_str(),
                    g.expected.c_str(), g.correct ? "exact" : "wrong");
    }
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

    summary_table(runs, mix).write_csv(s.out + "/summary.csv");
    curves_table(runs, mix).write_csv(s.out + "/curves.csv");
    write_charts(runs, mix, s.out);
    write_report(runs, mix, s, seconds);
    std::printf("\n%s\nwrote %s/report.md, summary.csv, curves.csv, val_loss.svg, train_loss.svg (%s m:ss)\n",
                summary_table(runs, mix).markdown().c_str(), s.out.c_str(), clock_str(seconds).c_str());

    if (s.check) {
      const std::vector<std::string> failures = check_outputs(runs, s.out);
      for (const auto& f : failures) std::printf("check failed: %s\n", f.c_str());
      if (!failures.empty()) return 1;
      std::printf("adaln_conditional: check passed\n");
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "adaln_conditional: error: %s\n", e.what());
    return 1;
  }
  return 0;
}
