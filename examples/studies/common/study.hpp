// study.hpp — what the study programs share besides the report writers: the training
// settings with their command-line options and the optimizer they build, the record of a
// training run, the arguments that rerun a study, the machine it ran on, and the small sums
// (the mean of a tail, a smoothed curve) that their reports quote. The pieces every training
// program needs (the schedule, the update, the progress line, the command line, the unigram
// baseline, teacher-forced scores) are the library's, in tapegrad::training.
//
//   struct Settings : study::Training, study::Machinery { ... };  // lr, steps, ..., seed, out
//   study::add_training_options(app, settings);                   // --lr, --steps, ...
//   auto optimizer = study::make_optimizer(model, settings);
//   auto schedule = training::make_schedule(*optimizer, settings.schedule_settings());
//   training::command_line("translate", arguments)  // "translate --lr 0.001 ..." for the report
#pragma once

#include <cmath>
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

  // The schedule's part, for training::make_schedule and training::describe.
  tapegrad::training::ScheduleSettings schedule_settings() const { return {schedule, warmup, steps, min_lr_ratio}; }
};

// --optimizer, --lr, --weight-decay, --schedule, --warmup, --min-lr-ratio, --clip, --steps.
void add_training_options(CLI::App& app, Training& t);
// --smoke: 30 steps, 5 of warm-up, lr 3e-3, for each of them not given on the command line.
void smoke_training(const CLI::App& app, Training& t);
// Weight decay on the matrices only (optim::weight_decay_groups: none on norms, biases, embeddings).
std::unique_ptr<tapegrad::optim::Optimizer> make_optimizer(const tapegrad::nn::Module& model, const Training& t);
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
  bool record(std::int64_t step, double loss, const tapegrad::training::UpdateResult& u);
  // Whether the validation is due now: every `interval` steps and after the last step.
  bool validation_due(std::int64_t interval, std::int64_t steps) const { return steps_run % interval == 0 || steps_run == steps; }
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

// The options of Training as (option, value) pairs, in the order of --help.
tapegrad::training::Arguments training_arguments(const Training& t);
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

// ---------------------------------------------------------------- the machine

// "CPU model, 2 thread(s) (2 hardware threads), OpenBLAS kernels Haswell".
std::string machine_line();

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

// ---------------------------------------------------------------- --check

// Each file in dir must be there and not empty, and each .svg an SVG. Returns the problems.
std::vector<std::string> check_files(const std::string& dir, const std::vector<std::string>& files);
// The first line of the CSV file at path must be these columns. Returns the problem, if any.
std::vector<std::string> check_csv_header(const std::string& path, const std::vector<std::string>& columns);
// Prints "check failed: ..." per problem; true when there were none.
bool print_problems(const std::vector<std::string>& problems);

}  // namespace study
