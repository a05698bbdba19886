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
#include <tapegrad/tapegrad.hpp>

#include <CLI/CLI.hpp>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "common/study.hpp"
#include "common/report.hpp"

using namespace tapegrad;
namespace fs = std::filesystem;

namespace {

// The optimizer, schedule and steps (Training), seed, threads, --out, --smoke, --check
// (Machinery), and the rest:
struct Settings : study::Training, study::Machinery {
  std::vector<std::string> tasks = {"copy", "reverse", "sort"};
  std::int64_t symbols = 8, min_len = 1, max_len = 8;
  std::int64_t layers = 2, d_model = 64, heads = 4, batch = 32;
  std::int64_t eval_interval = 100, val_per_task = 128, examples = 2;
  std::string init = "gpt2";

  Settings() {
    lr = 2e-3, weight_decay = 0.01, min_lr_ratio = 0.1, clip = 1.0, beta2 = 0.95, steps = 2000, warmup = 100;
    seed = 1, out = "adaln_out";
  }
};

// ---------------------------------------------------------------- data

// One row: which task, and its (source, answer) pair.
struct Example {
  std::int64_t task;
  data::SeqPair pair;
};

struct TaskMix {
  std::vector<std::unique_ptr<data::SymbolTask>> tasks;  // all over the same symbols

  explicit TaskMix(const Settings& s) {  // --tasks holds copy, reverse or sort (checked by CLI11)
    for (const auto& n : s.tasks) {
      if (n == "copy") tasks.push_back(std::make_unique<data::CopyTask>(s.symbols, s.min_len, s.max_len));
      else if (n == "reverse") tasks.push_back(std::make_unique<data::ReverseTask>(s.symbols, s.min_len, s.max_len));
      else tasks.push_back(std::make_unique<data::SortTask>(s.symbols, s.min_len, s.max_len));
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

struct RunResult : study::RunLog {  // steps, training loss, divergence, time
  Variant variant;
  std::vector<std::vector<double>> val_loss;  // [eval][task], one eval per val_steps
  std::vector<TaskEval> final_eval;           // per task
  std::vector<Generation> generations;
};

// Teacher-forced, on each task's held-out rows: loss per answer token (EOS included), token
// accuracy, and the share of rows whose answer tokens are all the argmax.
std::vector<TaskEval> evaluate(nn::TransformerLM& model, const Variant& v, const std::vector<std::vector<Example>>& val,
                               std::int64_t V, std::int64_t batch) {
  NoGradGuard no_grad;
  model.eval();
  std::vector<TaskEval> result;
  for (const auto& rows : val) {
    training::Scores scores;  // collate_lm's targets: the answer and EOS (the prompt is ignored)
    for (const auto chunk : study::chunks(rows, batch)) {
      const data::LMBatch b = data::collate_lm(v.pairs(chunk, V));
      scores.add(model.forward(b.inputs, v.classes(chunk)), b.targets);
    }
    result.push_back({scores.loss(), scores.token_accuracy(), scores.exact_match()});
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
      bool ended = false;
      std::vector<std::int64_t> answer = study::until_eos(tokens, T, tokens.size(), data::kEos, ended);
      for (auto& token : answer)
        if (token >= vocab.size()) token = data::kPad;  // a task token: show <pad>
      out.push_back({mix.tasks[t]->name(), vocab.join(val[t][i].pair.source), vocab.join(p.target), vocab.join(answer),
                     ended && answer == p.target});
    }
  return out;
}

RunResult train_one(const Variant& v, const TaskMix& mix, const std::vector<std::vector<Example>>& val,
                    const Settings& s, training::Progress& progress) {
  RunResult r;
  r.variant = v;
  const auto start = std::chrono::steady_clock::now();
  auto model = make_model(v, mix, s);
  r.parameters = model->num_parameters();
  auto optimizer = study::make_optimizer(*model, s);
  auto schedule = training::make_schedule(*optimizer, s.schedule_settings());
  const nn::NamedTensors params = model->named_parameters();
  const std::int64_t V = mix.vocab().size(), model_V = model->config.vocab_size;

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
    const training::UpdateResult u = training::update(*optimizer, loss, params, s.clip);
    if (!r.record(step, loss.item(), u)) break;
    if (r.validation_due(s.eval_interval, s.steps)) eval_now(r.steps_run);
    progress.done += 1;
    char line[160];
    std::snprintf(line, sizeof line, "%s  step %lld/%lld  loss %.4f  val (mean over tasks) %.4f  |g| %.3g", v.name.c_str(),
                  static_cast<long long>(r.steps_run), static_cast<long long>(s.steps), loss.item(),
                  study::mean(r.val_loss.back()), u.grad_norm);
    progress.show(line);
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
training::Arguments arguments(const Settings& s) {
  auto i = [](std::int64_t v) { return std::to_string(v); };
  training::Arguments a = {{"--tasks", study::comma_list(s.tasks)}, {"--symbols", i(s.symbols)}, {"--min-len", i(s.min_len)},
                        {"--max-len", i(s.max_len)}, {"--layers", i(s.layers)}, {"--d-model", i(s.d_model)},
                        {"--heads", i(s.heads)}, {"--init", s.init}};
  for (const auto& option : study::training_arguments(s)) a.push_back(option);
  a.insert(a.end(), {{"--batch", i(s.batch)}, {"--eval-interval", i(s.eval_interval)}, {"--val-per-task", i(s.val_per_task)},
                     {"--examples", i(s.examples)}, {"--seed", std::to_string(s.seed)}, {"--threads", i(s.threads)},
                     {"--out", s.out}});
  return a;
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

// One colour per task, one line style per variant: the first solid, the second dashed.
void write_charts(const std::vector<RunResult>& runs, const TaskMix& mix, const std::string& out) {
  study::LineChart val("Validation loss on the answer tokens, per task", "step", "cross-entropy (nats, log scale)");
  study::LineChart train("Training loss (moving average, β = 0.9)", "step", "cross-entropy (nats, log scale)");
  val.log_y = train.log_y = true;
  for (std::size_t i = 0; i < runs.size(); ++i) {
    const RunResult& r = runs[i];
    const bool dashed = i % 2 == 1;
    for (std::int64_t k = 0; k < mix.size(); ++k) {
      study::Series s{r.variant.name + " " + mix.tasks[k]->name(), r.val_steps, {}, dashed};
      for (const auto& losses : r.val_loss) s.y.push_back(losses[k]);
      val.series.push_back(std::move(s));
    }
    train.series.push_back(study::loss_curve(r.variant.name, r.train_loss, 0.9, dashed));
  }
  val.write_svg(out + "/val_loss.svg");
  train.write_svg(out + "/train_loss.svg");
}

void write_report(const std::vector<RunResult>& runs, const TaskMix& mix, const Settings& s, const std::string& timing) {
  std::ofstream md(s.out + "/report.md");
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
     << "## Setup\n\n"
     << "Machine: " << study::machine_line() << ". Whole study: " << timing << ".\n\n"
     << "Training: " << study::describe(s) << ". Initialization `" << s.init << "`.\n\n"
     << "Reproduce with:\n\n```sh\n" << training::command_line("adaln_conditional", arguments(s)) << "\n```\n\n"
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
  std::vector<std::string> failures =
      study::check_files(out, {"report.md", "summary.csv", "curves.csv", "val_loss.svg", "train_loss.svg"});
  const std::vector<std::string> header = study::check_csv_header(out + "/summary.csv", kSummaryColumns);
  failures.insert(failures.end(), header.begin(), header.end());
  for (const RunResult& r : runs) {
    const std::string name = r.variant.name + ": ";
    if (r.diverged()) {
      failures.push_back(name + "diverged at step " + std::to_string(r.diverged_at));
      continue;
    }
    for (double v : r.train_loss)
      if (!std::isfinite(v)) failures.push_back(name + "non-finite training loss");
    const double first = study::mean(r.val_loss.front()), last = study::mean(r.val_loss.back());
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
  app.add_option("--tasks", s.tasks, "comma-separated tasks, one class each: copy, reverse, sort")
      ->delimiter(',')->check(CLI::IsMember({"copy", "reverse", "sort"}));
  app.add_option("--symbols", s.symbols, "distinct symbols in the sequences")->check(CLI::Range(2, 1000));
  app.add_option("--min-len", s.min_len, "shortest source")->check(CLI::PositiveNumber);
  app.add_option("--max-len", s.max_len, "longest source")->check(CLI::PositiveNumber);
  app.add_option("--layers", s.layers, "transformer blocks")->check(CLI::Range(1, 256));
  app.add_option("--d-model", s.d_model, "model width")->check(CLI::PositiveNumber);
  app.add_option("--heads", s.heads, "attention heads (must divide d-model)")->check(CLI::PositiveNumber);
  app.add_option("--init", s.init, "gpt2, pytorch or xavier")->check(CLI::IsMember({"gpt2", "pytorch", "xavier"}));
  study::add_training_options(app, s);
  app.add_option("--batch", s.batch, "rows per step")->check(CLI::PositiveNumber);
  app.add_option("--eval-interval", s.eval_interval, "steps between validation losses")->check(CLI::PositiveNumber);
  app.add_option("--val-per-task", s.val_per_task, "held-out rows per task")->check(CLI::Range(1, 5000));
  app.add_option("--examples", s.examples, "greedy generations shown per task and variant")->check(CLI::NonNegativeNumber);
  study::add_machinery_options(app, s, "tiny sizes and a few steps (options given explicitly still apply)",
                               "exit 1 unless the outputs exist, hold finite values and the loss fell");
  CLI11_PARSE(app, argc, argv);

  if (s.smoke) {  // tiny defaults for every option not given on the command line
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

  try {
    if (s.min_len > s.max_len)
      throw ValueError("--min-len " + std::to_string(s.min_len) + " is above --max-len " + std::to_string(s.max_len));
    if (s.d_model % s.heads != 0)
      throw ValueError("--heads " + std::to_string(s.heads) + " must divide --d-model " + std::to_string(s.d_model));
    const TaskMix mix(s);
    if (s.threads > 0) set_num_threads(static_cast<int>(s.threads));
    fs::create_directories(s.out);

    // The held-out rows, per task, from their own seed.
    std::vector<std::vector<Example>> val(mix.size());
    Generator val_gen(s.seed + 1);
    for (std::int64_t t = 0; t < mix.size(); ++t)
      for (const auto& p : mix.tasks[t]->sample(s.val_per_task, val_gen)) val[t].push_back({t, p});
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
      if (r.diverged()) {
        progress.done += static_cast<double>(s.steps - r.steps_run);
        progress.line(v.name + " diverged at step " + std::to_string(r.diverged_at) + ": " + r.diverged_why);
        continue;
      }
      progress.line(v.name + ": " + std::to_string(r.parameters) + " parameters, " + study::fmt(r.seconds, 3) + " s");
      for (std::int64_t t = 0; t < mix.size(); ++t)
        std::printf("    %-8s val loss %.4f  token accuracy %.3f  exact match %.3f\n", mix.tasks[t]->name().c_str(),
                    r.final_eval[t].loss, r.final_eval[t].token_accuracy, r.final_eval[t].exact_match);
      for (const Generation& g : r.generations)
        std::printf("    [%s] %s -> %s  (expected %s, %s)\n", g.task.c_str(), g.source.c_str(), g.generated.c_str(),
                    g.expected.c_str(), g.correct ? "exact" : "wrong");
    }

    const std::string timing = progress.timing();
    const study::Table summary = summary_table(runs, mix);
    summary.write_csv(s.out + "/summary.csv");
    curves_table(runs, mix).write_csv(s.out + "/curves.csv");
    write_charts(runs, mix, s.out);
    write_report(runs, mix, s, timing);
    std::printf("\n%s\nwrote %s/report.md, summary.csv, curves.csv, val_loss.svg, train_loss.svg; whole study %s\n",
                summary.markdown().c_str(), s.out.c_str(), timing.c_str());
    if (s.check) {
      if (!study::print_problems(check_outputs(runs, s.out))) return 1;
      std::printf("adaln_conditional: check passed\n");
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "adaln_conditional: error: %s\n", e.what());
    return 1;
  }
  return 0;
}
