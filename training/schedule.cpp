// schedule.cpp — schedules by name, and from a saved state.
#include "schedule.hpp"

#include <algorithm>

namespace tapegrad::training {

const std::vector<std::string>& schedule_names() {
  static const std::vector<std::string> names = {"cosine", "linear", "constant", "noam"};
  return names;
}

std::int64_t warmup_steps(const ScheduleSettings& s) { return s.warmup >= s.steps ? s.steps / 10 : s.warmup; }

std::unique_ptr<optim::LRSchedule> make_schedule(optim::Optimizer& optimizer, const ScheduleSettings& s) {
  const std::int64_t warmup = warmup_steps(s), total = std::max<std::int64_t>(s.steps, 1);
  if (s.name == "cosine") return std::make_unique<optim::WarmupCosine>(optimizer, warmup, total, s.min_lr_ratio);
  if (s.name == "linear") return std::make_unique<optim::WarmupLinear>(optimizer, warmup, total, s.min_lr_ratio);
  if (s.name == "noam") return std::make_unique<optim::InverseSqrt>(optimizer, std::max<std::int64_t>(warmup, 1));
  if (s.name == "constant") return std::make_unique<optim::LinearWarmup>(optimizer, warmup);
  throw ValueError("unknown schedule '" + s.name + "' (expected cosine, linear, constant or noam)");
}

namespace {
double setting(const optim::ScheduleState& state, const std::string& name) {
  for (const auto& [key, value] : state.hyper_parameters)
    if (key == name) return value;
  throw ValueError(state.schedule + ": the saved schedule has no setting " + name);
}
bool has_setting(const optim::ScheduleState& state, const std::string& name) {
  for (const auto& [key, _] : state.hyper_parameters)
    if (key == name) return true;
  return false;
}
}  // namespace

std::unique_ptr<optim::LRSchedule> schedule_from_state(optim::Optimizer& optimizer, const optim::ScheduleState& state) {
  auto steps = [&](const char* name) { return static_cast<std::int64_t>(setting(state, name)); };
  std::unique_ptr<optim::LRSchedule> schedule;
  if (state.schedule == "WarmupCosine" || state.schedule == "WarmupLinear") {
    std::unique_ptr<optim::WarmupDecay> decay;
    if (state.schedule == "WarmupCosine")
      decay = std::make_unique<optim::WarmupCosine>(optimizer, steps("warmup_steps"), steps("total_steps"), setting(state, "floor"));
    else
      decay = std::make_unique<optim::WarmupLinear>(optimizer, steps("warmup_steps"), steps("total_steps"), setting(state, "floor"));
    if (has_setting(state, "replan_step")) decay->replan(steps("replan_step"), setting(state, "replan_factor"));
    schedule = std::move(decay);
  } else if (state.schedule == "LinearWarmup") {
    schedule = std::make_unique<optim::LinearWarmup>(optimizer, steps("warmup_steps"));
  } else if (state.schedule == "InverseSqrt") {
    schedule = std::make_unique<optim::InverseSqrt>(optimizer, steps("warmup_steps"));
  } else if (state.schedule == "ConstantSchedule") {
    schedule = std::make_unique<optim::ConstantSchedule>(optimizer);
  } else if (state.schedule == "StepDecay") {
    schedule = std::make_unique<optim::StepDecay>(optimizer, steps("step_size"), setting(state, "gamma"));
  } else {
    throw ValueError("schedule_from_state: cannot build a schedule of kind " + state.schedule);
  }
  schedule->load_state_dict(state);
  return schedule;
}

std::string describe(const ScheduleSettings& s) {
  const std::string warmup = std::to_string(warmup_steps(s)) + " warm-up steps, then ";
  if (s.name == "cosine" || s.name == "linear") return warmup + s.name + " decay to " + number_str(s.min_lr_ratio) + " × lr";
  return warmup + (s.name == "noam" ? "lr·√(warmup/t)" : "constant");
}

}  // namespace tapegrad::training
