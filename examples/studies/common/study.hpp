// study.hpp — what the study programs share besides the report writers: the training
// settings with their command-line options and the optimizer and schedule they build, the
// steps of a training run (an update, its record, teacher-forced scores), the command line
// that reruns a study, a progress line, the machine it ran on, and the small sums (the mean of
// a tail, a smoothed curve, a unigram baseline) that their reports quote.
//
//   struct Settings : study::Training, study::Machinery { ... };  // lr, steps, ..., seed, out
//   study::add_training_options(app, settings);                   // --lr, --steps, ...
//   auto optimizer = study::make_optimizer(model, settings);
//   auto schedule = study::make_schedule(*optimizer, settings);
//   study::command_line("translate", arguments)    // "translate --lr 0.001 ..." for the report
#pragma once

#include <chrono>
#include <cmath>
#include <cstdio>
#include <memory>
#include <span>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include <CLI/CLI.hpp>
#include <tapegrad/tapegrad.hpp>

#include "report.hpp"

namespace study {

// ---------------------------------------------------------------- training settings

// How every run of a study trains. Each study sets its own defaults (a Settings struct
// derives from this one and assigns them in its constructor).
struct Training {
  std::string optimizer = "adamw";  // adamw, adam or sgd (momentum 0.9)
  std::string schedule = "cosine";  // cosine, linear, constant or noam, each after a linear warm-up
  double lr = 1e-3, weight_decay = 0.01, min_lr_ratio = 0.1, clip = 0.0;
  double beta2 = 0.95;  // Adam's β₂, β₁ = 0.9: fixed by each study, not an option
  std::int64_t steps = 300, warmup = 30;
};

// --optimizer, --lr, --weight-decay, --schedule, --warmup, --min-lr-ratio, --clip, --steps.
void add_training_options(CLI::App& app, Training& t);
// --smoke: 30 steps, 5 of warm-up, lr 3e-3, for each of them not given on the command line.
void smoke_training(const CLI::App& app, Training& t);
// A run not longer than its warm-up warms up over its first tenth instead (as train_lm).
std::int64_t warmup_steps(const Training& t);
// Weight decay on the matrices only (optim::weight_decay_groups: none on norms, biases, embeddings).
std::unique_ptr<tapegrad::optim::Optimizer> make_optimizer(const tapegrad::nn::Module& model, const Training& t);
std::unique_ptr<tapegrad::optim::LRSchedule> make_schedule(tapegrad::optim::Optimizer& optimizer, const Training& t);
// One sentence for a report: "AdamW, betas (0.9, 0.95), weight decay 0.1 ...; lr 0.001, ...".
std::string describe(const Training& t);

// What every study has besides its subject: the seed, the threads, the output folder, and the
// --smoke and --check switches.
struct Machinery {
  std::uint64_t seed = 1;
  std::int64_t threads = 0;  // 0: TAPEGRAD_NUM_THREADS or all cores
  std::string out;
  bool smoke = false, check = false;
};
// --seed, --threads, --out, --smoke, --check; the last two say what they do in this study.
void add_machinery_options(CLI::App& app, Machinery& m, const std::string& smoke_help, const std::string& check_help);

// --smoke: `value` becomes `small` unless the option was given on the command line.
template <typename T, typename U>
void unless_given(const CLI::App& app, const char* option, T& value, const U& small) {
  if (app.count(option) == 0) value = small;
}

// ---------------------------------------------------------------- a training run

// One update from the loss of a batch: zero the gradients, backward, then, unless the loss or a
// gradient is NaN or Inf, clip the gradients at t.clip (0: not at all) and step. A non-finite
// value means the run has diverged: nothing is updated and `diverged` says where it was.
struct Update {
  double grad_norm = 0;  // before clipping
  std::string diverged;  // empty: the update was made
};
Update update(tapegrad::optim::Optimizer& optimizer, const tapegrad::Tensor& loss, const tapegrad::nn::NamedTensors& params,
              const Training& t);

// What every training run of a study records, step by step.
struct RunLog {
  std::int64_t parameters = 0, steps_run = 0;
  std::int64_t diverged_at = -1;  // the step whose loss or gradient was non-finite; -1: none
  std::string diverged_why;
  std::vector<double> train_loss;  // one per step run
  std::vector<double> val_steps;   // the steps after which the validation ran (0: before training)
  double seconds = 0;

  bool diverged() const { return diverged_at >= 0; }
  // Records the update of step `step` (0-based): its loss, or where the run diverged. Returns
  // false when it diverged: the run stops there.
  bool record(std::int64_t step, double loss, const Update& u);
  // Whether the validation is due now: every `interval` steps and after the last step.
  bool validation_due(std::int64_t interval, std::int64_t steps) const { return steps_run % interval == 0 || steps_run == steps; }
};

// Teacher-forced scores summed over held-out batches: logits (B, T, V) against targets (B, T);
// targets equal to data::kIgnoreIndex (padding, prompts) do not count.
struct Scores {
  double loss_sum = 0, right = 0, tokens = 0, rows = 0, exact_rows = 0;
  void add(const tapegrad::Tensor& logits, const tapegrad::Tensor& targets);
  double loss() const { return loss_sum / tokens; }           // cross-entropy per token
  double token_accuracy() const { return right / tokens; }    // share of tokens whose argmax is right
  double exact_match() const { return exact_rows / rows; }    // share of rows with every token right
};

// Views of consecutive pieces of at most n items of v: held-out data in batches.
template <typename T>
std::vector<std::span<const T>> chunks(const std::vector<T>& v, std::int64_t n) {
  std::vector<std::span<const T>> out;
  for (std::size_t i = 0; i < v.size(); i += static_cast<std::size_t>(n))
    out.emplace_back(v.data() + i, std::min(static_cast<std::size_t>(n), v.size() - i));
  return out;
}

// The tokens of seq[begin, end) before the first `eos`; `ended` says whether there was one.
std::vector<std::int64_t> until_eos(const std::vector<std::int64_t>& seq, std::size_t begin, std::size_t end,
                                    std::int64_t eos, bool& ended);

// ---------------------------------------------------------------- the command line

// (option, value) pairs in the order of --help.
using Arguments = std::vector<std::pair<std::string, std::string>>;
Arguments training_arguments(const Training& t);
// An argument as a POSIX shell reads it back ('' for the empty string).
std::string shell_quote(const std::string& arg);
// "program --option value ...": the command that reruns a study with every setting spelled
// out (defaults may change between versions).
std::string command_line(const std::string& program, const Arguments& arguments);
// The command as it was typed, argv[1..] quoted.
std::string invoked_command(const std::string& program, int argc, char** argv);

std::string join(const std::vector<std::string>& items, const std::string& separator = ", ");
// A list option's value: "6,12,24" (numbers with up to 6 significant digits).
template <typename T>
std::string comma_list(const std::vector<T>& items) {
  std::vector<std::string> text;
  for (const T& i : items) {
    if constexpr (std::is_same_v<T, std::string>) text.push_back(i);
    else if constexpr (std::is_floating_point_v<T>) text.push_back(fmt(i, 6));
    else text.push_back(std::to_string(i));
  }
  return join(text, ",");
}

// ---------------------------------------------------------------- time and machine

std::string clock_str(double seconds);  // "m:ss"
// "CPU model, 2 thread(s) (2 hardware threads), OpenBLAS kernels Haswell".
std::string machine_line();
// The 1-, 5- and 15-minute load averages of /proc/loadavg ("unknown" when unreadable).
std::string load_average();

// A progress line with an ETA over all runs of a study. Work is counted in units the caller
// picks (steps × layers, say); the ETA extrapolates the time per unit done so far. On a
// terminal show() redraws the line at most 5 times a second; in a log it writes one line every
// 10 seconds. line() always writes, and ends the line: for a run's result.
class Progress {
 public:
  explicit Progress(double total_work, std::FILE* stream = stderr);
  double total = 0, done = 0;
  std::string load_at_start = load_average();
  double elapsed() const;  // seconds since construction
  // "4:01 (m:ss); load average (1, 5, 15 min) 1.9 1.5 1.2 at the start, 2.1 1.9 1.4 at the end"
  std::string timing() const;
  void show(const std::string& what);
  void line(const std::string& what);

 private:
  void print(const std::string& what, bool newline);
  std::FILE* stream_;
  bool tty_;
  std::chrono::steady_clock::time_point start_, last_show_;
};

// ---------------------------------------------------------------- small sums

// Mean of v; NaN when v is empty.
double mean(const std::vector<double>& v);
// Mean of the last n values (fewer when v is shorter); NaN when v is empty.
double mean_of_last(const std::vector<double>& v, std::size_t n);
// Exponential moving average with bias correction, as Adam's moments:
// m_t = β·m_{t−1} + (1 − β)·v_t, smoothed_t = m_t / (1 − β^t).
std::vector<double> smooth(const std::vector<double>& v, double beta);
// A training-loss curve for a chart: x = step 1, 2, ..., y = smooth(loss, beta).
Series loss_curve(const std::string& name, const std::vector<double>& loss, double beta, bool dashed = false);

// The unigram model of some tokens, add-one smoothed: p(v) = (count(v) + 1) / (n + V), so no
// token has probability 0. Its cross-entropy on held-out tokens is what a model that ignores
// the context reaches: a model that does not get below it has learned nothing useful.
class Unigram {
 public:
  explicit Unigram(std::int64_t vocab_size) : counts_(static_cast<std::size_t>(vocab_size), 1.0), total_(double(vocab_size)) {}
  void add(std::int64_t token) { counts_.at(static_cast<std::size_t>(token)) += 1, total_ += 1; }
  template <typename Tokens>
  void add_all(const Tokens& tokens) {
    for (auto t : tokens) add(t);
  }
  // −mean log p(t) over the tokens.
  template <typename Tokens>
  double cross_entropy(const Tokens& tokens) const {
    double nll = 0, n = 0;
    for (auto t : tokens) nll -= std::log(counts_.at(static_cast<std::size_t>(t)) / total_), n += 1;
    return nll / n;
  }

 private:
  std::vector<double> counts_;
  double total_;
};

// ---------------------------------------------------------------- --check

// Each file in dir must be there and not empty, and each .svg an SVG. Returns the problems.
std::vector<std::string> check_files(const std::string& dir, const std::vector<std::string>& files);
// The first line of the CSV file at path must be these columns. Returns the problem, if any.
std::vector<std::string> check_csv_header(const std::string& path, const std::vector<std::string>& columns);
// Prints "check failed: ..." per problem; true when there were none.
bool print_problems(const std::vector<std::string>& problems);

}  // namespace study
