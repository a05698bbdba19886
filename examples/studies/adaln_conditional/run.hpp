// run.hpp — adaln_conditional's data and one run: a TransformerLM told the task one way (a
// Variant) trained on the task mix (study::train_run), then scored per task.
#pragma once

#include <cmath>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include <tapegrad/tapegrad.hpp>

#include "common/run.hpp"
#include "settings.hpp"

namespace adaln_conditional {

// One row: which task, and its (source, answer) pair.
struct Example {
  std::int64_t task;
  tapegrad::data::SeqPair pair;
};

struct TaskMix {
  std::vector<std::unique_ptr<tapegrad::data::SymbolTask>> tasks;  // all over the same symbols

  explicit TaskMix(const Settings& s);  // --tasks holds copy, reverse or sort (checked by CLI11)
  std::int64_t size() const { return static_cast<std::int64_t>(tasks.size()); }
  const tapegrad::data::Vocab& vocab() const { return tasks[0]->vocab(); }
  // n rows, each from a task drawn uniformly.
  std::vector<Example> sample(std::int64_t n, tapegrad::Generator& gen) const;
};

// The held-out rows, per task, from their own seed.
using HeldOut = std::vector<std::vector<Example>>;
HeldOut held_out(const TaskMix& mix, std::int64_t per_task, std::uint64_t seed);

// How a variant shows the task to the model.
struct Variant {
  std::string name;
  bool adaln;  // true: classes to forward(); false: a task token before the source

  // collate_lm's pairs: with a task token, source = <task> source. Task tokens follow the
  // task vocabulary: id V + task.
  std::vector<tapegrad::data::SeqPair> pairs(std::span<const Example> rows, std::int64_t V) const;
  // The task ids as forward()'s classes (B); undefined for the task-token variant.
  tapegrad::Tensor classes(std::span<const Example> rows) const;
};

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

// Progress is counted in steps.
RunResult train_one(const Variant& v, const TaskMix& mix, const HeldOut& val, const Settings& s,
                    tapegrad::training::Progress& progress);

}  // namespace adaln_conditional
