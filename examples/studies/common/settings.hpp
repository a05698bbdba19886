// settings.hpp — the settings every study shares, with their command-line options: how its
// runs train (Training: the optimizer, the schedule, the steps) and what every program has
// besides its subject (Machinery: the seed, the threads, --out, --smoke, --check).
//
//   struct Settings : study::Training, study::Machinery { ... };  // lr, steps, ..., seed, out
//   study::add_training_options(app, settings);                   // --lr, --steps, ...
//   auto optimizer = study::make_optimizer(model, settings);
//   auto schedule = training::make_schedule(*optimizer, settings.schedule_settings());
//   training::command_line("translate", arguments)  // "translate --lr 0.001 ..." for the report
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include <tapegrad/tapegrad.hpp>

#include "common/report.hpp"

// Declared, not included: CLI11's header takes about 7 s to compile, and every file of a study
// includes this one. The files that build or parse options include <CLI/CLI.hpp> themselves.
namespace CLI {
class App;
}

namespace study {

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
// A language model's: the same, and under a depth parametrization (Depth-muP, CompleteP: a
// nonzero branch exponent) the blocks' lr and Adam's eps follow the depth as well
// (optim::depth_scaled_groups); SGD is refused there, for it has no eps to scale.
std::unique_ptr<tapegrad::optim::Optimizer> make_optimizer(const tapegrad::nn::TransformerLM& model, const Training& t);
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

// Throws ValueError unless the heads divide d_model (each head gets d_model / heads features).
void require_heads_divide(std::int64_t d_model, std::int64_t heads);

// Whether the option was given on the command line.
bool given(const CLI::App& app, const char* option);
// --smoke: `value` becomes `small` unless the option was given on the command line.
template <typename T, typename U>
void unless_given(const CLI::App& app, const char* option, T& value, const U& small) {
  if (!given(app, option)) value = small;
}

// ---------------------------------------------------------------- the command line that reruns a study

// Every option of a study as (option, value) pairs, in the order of --help: the study's
// subject (placements, sizes, ...), then the options of Training, then the study's own that
// follow them (batch, evaluation, ...), then --seed, --threads, --out.
tapegrad::training::Arguments study_arguments(tapegrad::training::Arguments subject, const Training& t,
                                              const tapegrad::training::Arguments& after, const Machinery& m);

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

}  // namespace study
