// spike_guard.hpp — skip an update whose loss or gradient norm jumps far above its recent
// history, as llm.c's -sl and -sg do: a batch of bad data or a rare numerical accident then
// costs one step instead of derailing the run (the loss spikes of large-model training,
// Chowdhery et al. 2022 §5.1, handled there by skipping batches).
//
//   training::SpikeGuard guard({3.0, 3.0, 128});      // skip at z > 3 (loss), z > 3 (|g|)
//   hooks.skip = [&](double loss, double norm) { return guard.judge(loss, norm); };
//
// For each watched quantity x (the step's loss; the gradient norm before clipping):
//
//   z = (x − mean) / std      over the previous `window` steps' values (population std)
//
// and the update is skipped when z > threshold. Each value joins its window afterwards, also
// a skipped one: a lasting change of level (a new lr phase) then enters the window and stops
// being skipped, where keeping spikes out would skip forever. Two choices differ from llm.c:
// z compares x with the values before it, not with a window that already holds x (there, one
// value among n can never exceed z = √(n−1), and a spike widens the spread that judges it);
// and mean and spread are summed afresh each step rather than as running Σx, Σx² (which lose
// their digits to cancellation when the spread is small next to the mean).
// Until the window is full nothing is skipped. The windows travel in the checkpoint
// (state()/restore()), so a resumed run skips the same steps as a straight one.
#pragma once

#include <cstddef>
#include <deque>
#include <string>

#include "../io/model_config.hpp"

namespace tapegrad::training {

// The last `size` values of a quantity and the z-score of a new one against them.
class ZScoreWindow {
 public:
  explicit ZScoreWindow(std::size_t size);
  // z of x against the window: NaN until it holds `size` values, 0 when they are all equal
  // and x is too, +inf above such a flat window (−inf below). Then x joins the window.
  double push(double x);
  bool full() const { return values_.size() == size_; }
  double mean() const;
  double stddev() const;
  const std::deque<double>& values() const { return values_; }  // oldest first
  void restore(std::deque<double> values);

 private:
  std::size_t size_;
  std::deque<double> values_;
};

struct SpikeGuardOptions {
  double loss_z = 0;       // skip when the loss's z-score exceeds this (0: not watched)
  double grad_norm_z = 0;  // the same for the gradient norm (0: not watched)
  std::size_t window = 128;  // steps in each window (llm.c's OUTLIER_DETECTOR_WINDOW_SIZE)
};

class SpikeGuard {
 public:
  explicit SpikeGuard(const SpikeGuardOptions& options);
  bool on() const { return options_.loss_z > 0 || options_.grad_norm_z > 0; }
  // Empty: take the step. Else why it is skipped, e.g. "loss 5.91 is 4.2 standard deviations
  // above the mean 3.02 of the last 128 steps (threshold 3)". Both windows take their value.
  std::string judge(double loss, double grad_norm);
  // What judged the step (the quantity skipped on: "loss" or "grad_norm"; empty: taken).
  const std::string& last_skip() const { return last_skip_; }

  // The windows as checkpoint metadata ("spike.loss", "spike.grad_norm": the values in hex,
  // exact) and back. restore() ignores a checkpoint without them (a run that had no guard).
  io::Metadata state() const;
  void restore(const io::Metadata& extra);

 private:
  SpikeGuardOptions options_;
  ZScoreWindow loss_, grad_norm_;
  std::string last_skip_;
};

}  // namespace tapegrad::training
