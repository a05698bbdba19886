// run.hpp — one training run of a study: the loop that translate and adaln_conditional share,
// and what it records. The study brings its data and its model as two callbacks; the loop is
//
//   validate()                               the held-out scores before training (step 0)
//   for step = 0 .. steps − 1:
//     schedule.apply(step)                   the lr of this step
//     loss = batch_loss(step)                the study draws the step's batch, runs the forward pass
//     u = training::update(optimizer, loss)  backward, health check, clip at t.clip, step
//     log.record(step, loss, lr, u)          or stop: a NaN/Inf loss or gradient, the run diverged
//     every eval_interval steps, and after the last: validate(); a NaN/Inf validation loss
//       (finite gradients, but an update that overflowed) stops the run as diverged too
//     progress.show("pre L=6  step 30/300  loss 2.31  val 2.40  |g| 0.52")
//
// with the optimizer and the schedule that t names (study::make_optimizer,
// training::make_schedule). A run that diverged counts its remaining steps as done and says
// where it stopped, on a line of its own.
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include <tapegrad/tapegrad.hpp>

#include "settings.hpp"

namespace study {

// What every training run of a study records, step by step.
struct RunLog {
  std::int64_t parameters = 0, steps_run = 0;
  std::int64_t diverged_at = -1;  // the step whose loss or gradient was non-finite; -1: none
  std::string diverged_why;
  std::vector<double> train_loss, grad_norm, lr;  // one per step run; the gradient norm before clipping
  std::vector<double> val_steps;                  // the steps after which the validation ran (0: before training)
  double seconds = 0;

  bool diverged() const { return diverged_at >= 0; }
  // Records the update of step `step` (0-based), taken at learning rate lr: its loss, or where
  // the run diverged. Returns false when it diverged: the run stops there.
  bool record(std::int64_t step, double loss, double lr, const tapegrad::training::UpdateResult& u);
  // Whether the validation is due now: every `interval` steps and after the last step.
  bool validation_due(std::int64_t interval, std::int64_t steps) const { return steps_run % interval == 0 || steps_run == steps; }
};

// What a study brings to the loop.
struct RunSteps {
  std::string name;               // "pre L=6": the run in the progress line
  std::string val_label = "val";  // what the validation loss in the progress line is
  std::int64_t eval_interval = 100;
  double work_per_step = 1;       // the progress units a step counts (a study's runs may cost more per step)
  // The training loss of step `step`'s batch: a scalar whose graph reaches the model.
  std::function<tapegrad::Tensor(std::int64_t step)> batch_loss;
  // The validation after log.steps_run steps: records what the study keeps (val_steps is
  // recorded by the loop) and returns the loss the progress line shows.
  std::function<double()> validate;
};

// Trains `model` for t.steps steps as the loop above says, into `log`.
void train_run(tapegrad::nn::Module& model, const Training& t, const RunSteps& steps, tapegrad::training::Progress& progress,
               RunLog& log);

// ---------------------------------------------------------------- held-out data

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

}  // namespace study
