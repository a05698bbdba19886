// schedule.hpp — learning-rate schedules by name, as training programs offer them:
//
//   cosine    linear warm-up, then a cosine down to min_lr_ratio × lr at the last step
//   linear    linear warm-up, then a straight line down to min_lr_ratio × lr
//   constant  linear warm-up, then constant (warmup 0: constant from the first step)
//   noam      linear warm-up, then lr·√(warmup/t)  (Vaswani et al. 2017)
//
// Every schedule warms up the same way: a run not longer than its warm-up warms up over its
// first tenth instead. schedule_from_state() rebuilds a saved schedule with its own settings,
// so a resumed run continues it exactly, whatever the command line says; extending a run
// (more steps on resume) re-plans the decay (optim::LRSchedule::extend).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "../optim/lr_schedule.hpp"

namespace tapegrad::training {

struct ScheduleSettings {
  std::string name = "cosine";
  std::int64_t warmup = 100;  // warm-up updates (>= steps: a tenth of the steps)
  std::int64_t steps = 1000;  // updates in the whole run
  double min_lr_ratio = 0.1;  // final lr / peak lr (cosine and linear)
};

// "cosine", "linear", "constant", "noam"
const std::vector<std::string>& schedule_names();
// The warm-up a run gets: settings.warmup, or steps / 10 when the run is not longer than it.
std::int64_t warmup_steps(const ScheduleSettings& settings);
// The schedule called settings.name over optimizer's groups; ValueError for an unknown name.
std::unique_ptr<optim::LRSchedule> make_schedule(optim::Optimizer& optimizer, const ScheduleSettings& settings);
// The schedule a state was saved from, built with the state's own settings and restored to it.
// FormatError-free: a kind this function cannot build is a ValueError naming it.
std::unique_ptr<optim::LRSchedule> schedule_from_state(optim::Optimizer& optimizer, const optim::ScheduleState& state);
// "250 warm-up steps, then cosine decay to 0.1 × lr": for reports.
std::string describe(const ScheduleSettings& settings);

}  // namespace tapegrad::training
