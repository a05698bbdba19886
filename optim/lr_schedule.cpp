// lr_schedule.cpp — the schedules' closed forms (formulas in lr_schedule.hpp), setting the
// groups' lrs, and the schedule state.
#include "lr_schedule.hpp"

#include <cmath>
#include <numbers>

namespace tapegrad::optim {

LRSchedule::LRSchedule(Optimizer& optimizer) : optimizer_(optimizer) {
  for (std::size_t g = 0; g < optimizer.num_groups(); ++g) base_lrs_.push_back(optimizer.lr(g));
}

void LRSchedule::fail(const std::string& what) const { throw ValueError(name() + ": " + what); }

void LRSchedule::check_step(std::int64_t step) const {
  if (step < 0) fail("step " + std::to_string(step) + " is negative");
}

void LRSchedule::apply(std::int64_t step) {
  check_step(step);
  for (std::size_t g = 0; g < base_lrs_.size(); ++g) optimizer_.set_lr(g, lr_at(step, g));
  step_ = step;
}

double LRSchedule::lr_at(std::int64_t step, std::size_t group) const {
  check_step(step);
  if (group >= base_lrs_.size())
    fail("group " + std::to_string(group) + " out of range (" + std::to_string(base_lrs_.size()) + " groups)");
  return base_lrs_[group] * factor(step);
}

bool LRSchedule::extend(std::int64_t, std::int64_t) { return false; }

ScheduleState LRSchedule::state_dict() const { return {name(), step_, base_lrs_, hyper_parameters()}; }

void LRSchedule::load_state_dict(const ScheduleState& state) {
  const std::string who = "load_state_dict: ";
  if (state.schedule != name()) fail(who + "the state is from " + state.schedule + ", not " + name());
  if (state.base_lrs.size() != base_lrs_.size())
    fail(who + "the state has " + std::to_string(state.base_lrs.size()) + " base lrs, the optimizer " +
         std::to_string(base_lrs_.size()) + " groups");
  const HyperParameters mine = hyper_parameters();
  if (state.hyper_parameters.size() != mine.size()) fail(who + "the state's settings do not match this schedule's");
  for (std::size_t i = 0; i < mine.size(); ++i)
    if (state.hyper_parameters[i] != mine[i])
      fail(who + "the state has " + state.hyper_parameters[i].first + " = " +
           number_str(state.hyper_parameters[i].second) + ", this schedule " + mine[i].first + " = " +
           number_str(mine[i].second));
  for (double lr : state.base_lrs)
    if (!(lr >= 0)) fail(who + "invalid base lr " + number_str(lr));
  check_step(state.step);
  base_lrs_ = state.base_lrs;
  apply(state.step);
}

namespace {

// t/W during warmup (t = step + 1, so the first update already moves), 1 after.
double warmup_factor(std::int64_t step, std::int64_t warmup) {
  const std::int64_t t = step + 1;
  return t < warmup ? static_cast<double>(t) / static_cast<double>(warmup) : 1.0;
}

// p = (t − W)/(N − W) clamped to [0, 1]: how far the decay has gone.
double decay_progress(std::int64_t step, std::int64_t warmup, std::int64_t total) {
  const double p = static_cast<double>(step + 1 - warmup) / static_cast<double>(total - warmup);
  return std::min(1.0, std::max(0.0, p));
}

void check_warmup_total(const LRSchedule& s, std::int64_t warmup, std::int64_t total, double floor) {
  if (warmup < 0) throw ValueError(s.name() + ": warmup_steps " + std::to_string(warmup) + " is negative");
  if (total <= warmup)
    throw ValueError(s.name() + ": total_steps " + std::to_string(total) + " must be greater than warmup_steps " +
                     std::to_string(warmup));
  if (!(floor >= 0 && floor <= 1))
    throw ValueError(s.name() + ": floor " + number_str(floor) + " must be in [0, 1] (a fraction of the base lr)");
}

}  // namespace

ConstantSchedule::ConstantSchedule(Optimizer& optimizer) : LRSchedule(optimizer) { apply(0); }

double ConstantSchedule::factor(std::int64_t step) const {
  check_step(step);
  return 1.0;
}

LinearWarmup::LinearWarmup(Optimizer& optimizer, std::int64_t warmup_steps)
    : LRSchedule(optimizer), warmup_(warmup_steps) {
  if (warmup_ < 0) fail("warmup_steps " + std::to_string(warmup_) + " is negative");
  apply(0);
}

double LinearWarmup::factor(std::int64_t step) const {
  check_step(step);
  return warmup_factor(step, warmup_);
}

HyperParameters LinearWarmup::hyper_parameters() const {
  return {{"warmup_steps", static_cast<double>(warmup_)}};
}

WarmupDecay::WarmupDecay(Optimizer& optimizer, std::int64_t warmup_steps, std::int64_t total_steps, double floor)
    : LRSchedule(optimizer), warmup_(warmup_steps), total_(total_steps), floor_(floor) {}

double WarmupDecay::factor(std::int64_t step) const {
  check_step(step);
  if (step + 1 < warmup_) return warmup_factor(step, warmup_);
  if (replan_step_ < 0) return floor_ + (1 - floor_) * shape(decay_progress(step, warmup_, total_));
  // re-planned at s = replan_step_: q = (t − s − 1)/(N − s − 1), from replan_factor_ down to the floor
  return floor_ + (replan_factor_ - floor_) * shape(decay_progress(step, replan_step_ + 1, total_));
}

HyperParameters WarmupDecay::hyper_parameters() const {
  HyperParameters hp = {{"warmup_steps", static_cast<double>(warmup_)}, {"total_steps", static_cast<double>(total_)}, {"floor", floor_}};
  if (replan_step_ >= 0) hp.insert(hp.end(), {{"replan_step", static_cast<double>(replan_step_)}, {"replan_factor", replan_factor_}});
  return hp;
}

bool WarmupDecay::extend(std::int64_t total_steps, std::int64_t from_step) {
  check_step(from_step);
  if (total_steps <= total_)
    fail("extend: total_steps " + std::to_string(total_steps) + " must be above the planned " + std::to_string(total_));
  if (from_step + 1 >= warmup_) replan(from_step, factor(from_step));  // the decay has begun: restart it from here
  total_ = total_steps;
  return true;
}

void WarmupDecay::replan(std::int64_t from_step, double from_factor) {
  check_step(from_step);
  if (!(from_factor >= floor_ && from_factor <= 1)) fail("replan: factor " + number_str(from_factor) + " is outside [floor, 1]");
  replan_step_ = from_step;
  replan_factor_ = from_factor;
}

WarmupCosine::WarmupCosine(Optimizer& optimizer, std::int64_t warmup_steps, std::int64_t total_steps, double floor)
    : WarmupDecay(optimizer, warmup_steps, total_steps, floor) {
  check_warmup_total(*this, warmup_steps, total_steps, floor);
  apply(0);
}

double WarmupCosine::shape(double p) const { return 0.5 * (1 + std::cos(std::numbers::pi * p)); }

WarmupLinear::WarmupLinear(Optimizer& optimizer, std::int64_t warmup_steps, std::int64_t total_steps, double floor)
    : WarmupDecay(optimizer, warmup_steps, total_steps, floor) {
  check_warmup_total(*this, warmup_steps, total_steps, floor);
  apply(0);
}

double WarmupLinear::shape(double p) const { return 1 - p; }

InverseSqrt::InverseSqrt(Optimizer& optimizer, std::int64_t warmup_steps)
    : LRSchedule(optimizer), warmup_(warmup_steps) {
  if (warmup_ < 1) fail("warmup_steps " + std::to_string(warmup_) + " must be >= 1");
  apply(0);
}

double InverseSqrt::factor(std::int64_t step) const {
  check_step(step);
  const std::int64_t t = step + 1;
  if (t < warmup_) return warmup_factor(step, warmup_);
  return std::sqrt(static_cast<double>(warmup_) / static_cast<double>(t));
}

HyperParameters InverseSqrt::hyper_parameters() const {
  return {{"warmup_steps", static_cast<double>(warmup_)}};
}

double noam_lr(std::int64_t d_model, std::int64_t warmup_steps, double scale) {
  if (d_model < 1 || warmup_steps < 1)
    throw ValueError("noam_lr: d_model " + std::to_string(d_model) + " and warmup_steps " +
                     std::to_string(warmup_steps) + " must be >= 1");
  return scale / std::sqrt(static_cast<double>(d_model)) / std::sqrt(static_cast<double>(warmup_steps));
}

StepDecay::StepDecay(Optimizer& optimizer, std::int64_t step_size, double gamma)
    : LRSchedule(optimizer), step_size_(step_size), gamma_(gamma) {
  if (step_size_ < 1) fail("step_size " + std::to_string(step_size_) + " must be >= 1");
  if (!(gamma_ > 0)) fail("gamma " + number_str(gamma_) + " must be > 0");
  apply(0);
}

double StepDecay::factor(std::int64_t step) const {
  check_step(step);
  return std::pow(gamma_, static_cast<double>(step / step_size_));
}

HyperParameters StepDecay::hyper_parameters() const {
  return {{"step_size", static_cast<double>(step_size_)}, {"gamma", gamma_}};
}

}  // namespace tapegrad::optim
