// lr_schedule.hpp — learning-rate schedules: small objects that set every group's lr for a
// given step.
//
// A schedule multiplies each group's base lr (the lr the group had when the schedule was
// built) by factor(step), as torch.optim.lr_scheduler.LambdaLR does, so groups with different
// lrs keep their ratio. `step` is the 0-based index of the coming update and t = step + 1
// counts updates from 1:
//
//   ConstantSchedule   1
//   LinearWarmup       t/W for t <= W, then 1
//   WarmupCosine       t/W for t <= W, then f + (1 − f)·½(1 + cos(π·p)),  p = min(1, (t − W)/(N − W))
//   WarmupLinear       t/W for t <= W, then f + (1 − f)·(1 − p)
//   InverseSqrt        t/W for t <= W, then √(W/t)   ("Noam", Vaswani et al. 2017, §5.3)
//   StepDecay          γ^⌊step/S⌋                    (torch.optim.lr_scheduler.StepLR)
//
// with W warmup steps, N total steps, f the floor (final lr / base lr). The loop:
//
//   optim::WarmupCosine schedule(opt, /*warmup=*/100, /*total=*/5000, /*floor=*/0.1);
//   for (std::int64_t step = 0; step < 5000; ++step) {
//     schedule.apply(step);   // sets the lrs for this update
//     ...; opt.step();
//   }
//
// The original Transformer lr, d_model^-0.5 · min(t^-0.5, t·W^-1.5), is InverseSqrt with the
// base lr noam_lr(d_model, W): build the optimizer with that lr.
//
// Extending a run (a resumed run given more steps): extend(N', s) moves the end of the decay
// of WarmupCosine and WarmupLinear to N' and re-plans it from the coming update s: the factor
// at s stays what it was (f_s), then decays with the same shape from f_s down to the floor at
// N' (cosine: f + (f_s − f)·½(1 + cos(π·q)), q = (t − s − 1)/(N' − s − 1)). Still in the
// warm-up, only N moves. A run extended after its decay ended stays at the floor. The other
// schedules have no end to move.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "optimizer.hpp"

namespace tapegrad::optim {

// Everything a schedule needs to continue exactly where it stopped.
struct ScheduleState {
  std::string schedule;              // "WarmupCosine", ...
  std::int64_t step = 0;             // the last step applied
  std::vector<double> base_lrs;      // one per group
  HyperParameters hyper_parameters;  // warmup_steps, total_steps, floor, ... (checked on load)
};

class LRSchedule {
 public:
  virtual ~LRSchedule() = default;
  LRSchedule(const LRSchedule&) = delete;
  LRSchedule& operator=(const LRSchedule&) = delete;

  // The multiplier of the base lrs for the update with 0-based index step (>= 0).
  virtual double factor(std::int64_t step) const = 0;
  // "WarmupCosine", ...
  virtual std::string name() const = 0;
  // The settings, e.g. {{"warmup_steps", 100}, {"total_steps", 5000}, {"floor", 0.1}}.
  virtual HyperParameters hyper_parameters() const = 0;

  // Sets every group's lr to base_lrs()[g] · factor(step), and remembers step.
  void apply(std::int64_t step);
  // Moves the schedule's planned end to total_steps, re-planned from the update with index
  // from_step (see above). Returns false for schedules without an end (nothing changes).
  virtual bool extend(std::int64_t total_steps, std::int64_t from_step);
  // The last step applied (0 right after construction, which applies step 0).
  std::int64_t step() const { return step_; }
  // What apply(step) would set group g's lr to.
  double lr_at(std::int64_t step, std::size_t group = 0) const;
  const std::vector<double>& base_lrs() const { return base_lrs_; }

  // A snapshot: kind, step, base lrs and settings (torch.optim.lr_scheduler's state_dict()).
  ScheduleState state_dict() const;
  // Restores base lrs and step (then applies it); the schedule's kind, settings and number of
  // groups must match.
  void load_state_dict(const ScheduleState& state);

  // The names before PyTorch's, kept for one release so that code using them still builds.
  [[deprecated("use state_dict()")]] ScheduleState state() const { return state_dict(); }
  [[deprecated("use load_state_dict()")]] void load_state(const ScheduleState& state) { load_state_dict(state); }

 protected:
  // Records the optimizer's current lrs as the base lrs. Each schedule's constructor ends
  // with apply(0).
  explicit LRSchedule(Optimizer& optimizer);
  void check_step(std::int64_t step) const;
  [[noreturn]] void fail(const std::string& what) const;

 private:
  Optimizer& optimizer_;
  std::vector<double> base_lrs_;
  std::int64_t step_ = 0;
};

// The base lrs, unchanged.
class ConstantSchedule : public LRSchedule {
 public:
  explicit ConstantSchedule(Optimizer& optimizer);
  double factor(std::int64_t step) const override;
  std::string name() const override { return "ConstantSchedule"; }
  HyperParameters hyper_parameters() const override { return {}; }
};

// Linear warmup over warmup_steps updates (>= 0; 0: none), then constant.
class LinearWarmup : public LRSchedule {
 public:
  LinearWarmup(Optimizer& optimizer, std::int64_t warmup_steps);
  double factor(std::int64_t step) const override;
  std::string name() const override { return "LinearWarmup"; }
  HyperParameters hyper_parameters() const override;

 private:
  std::int64_t warmup_;
};

// Linear warmup, then a decay from 1 down to floor at total_steps, then floor: what
// WarmupCosine and WarmupLinear share (their decay's shape is theirs).
class WarmupDecay : public LRSchedule {
 public:
  double factor(std::int64_t step) const override;
  HyperParameters hyper_parameters() const override;
  bool extend(std::int64_t total_steps, std::int64_t from_step) override;
  // Restores a re-planned decay from its hyper-parameters replan_step and replan_factor
  // (what extend() set): building the schedule of a saved state.
  void replan(std::int64_t from_step, double from_factor);

 protected:
  WarmupDecay(Optimizer& optimizer, std::int64_t warmup_steps, std::int64_t total_steps, double floor);
  // The decay's shape over its progress p in [0, 1]: from 1 at p = 0 to 0 at p = 1.
  virtual double shape(double p) const = 0;

 private:
  std::int64_t warmup_, total_;
  double floor_;
  std::int64_t replan_step_ = -1;  // -1: as planned; else the decay restarts here from replan_factor_
  double replan_factor_ = 1.0;
};

// Linear warmup, then a cosine from 1 down to floor at total_steps, then floor.
class WarmupCosine : public WarmupDecay {
 public:
  WarmupCosine(Optimizer& optimizer, std::int64_t warmup_steps, std::int64_t total_steps, double floor = 0.0);
  std::string name() const override { return "WarmupCosine"; }

 private:
  double shape(double p) const override;  // ½(1 + cos(π·p))
};

// Linear warmup, then a straight line from 1 down to floor at total_steps, then floor.
class WarmupLinear : public WarmupDecay {
 public:
  WarmupLinear(Optimizer& optimizer, std::int64_t warmup_steps, std::int64_t total_steps, double floor = 0.0);
  std::string name() const override { return "WarmupLinear"; }

 private:
  double shape(double p) const override;  // 1 − p
};

// Linear warmup to the base lr at t = warmup_steps (>= 1), then decay as 1/√t.
class InverseSqrt : public LRSchedule {
 public:
  InverseSqrt(Optimizer& optimizer, std::int64_t warmup_steps);
  double factor(std::int64_t step) const override;
  std::string name() const override { return "InverseSqrt"; }
  HyperParameters hyper_parameters() const override;

 private:
  std::int64_t warmup_;
};

// The peak lr of the original Transformer schedule, reached at t = warmup_steps:
// scale · d_model^-0.5 · warmup_steps^-0.5. With InverseSqrt(opt, warmup_steps) and this base
// lr, the lr at update t is scale · d_model^-0.5 · min(t^-0.5, t · warmup_steps^-1.5).
double noam_lr(std::int64_t d_model, std::int64_t warmup_steps, double scale = 1.0);

// Multiplies the lrs by gamma every step_size updates.
class StepDecay : public LRSchedule {
 public:
  StepDecay(Optimizer& optimizer, std::int64_t step_size, double gamma = 0.1);
  double factor(std::int64_t step) const override;
  std::string name() const override { return "StepDecay"; }
  HyperParameters hyper_parameters() const override;

 private:
  std::int64_t step_size_;
  double gamma_;
};

}  // namespace tapegrad::optim
