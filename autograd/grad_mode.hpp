// grad_mode.hpp — switching recording off: NoGradGuard, as torch::NoGradGuard.
//
//   { NoGradGuard no_grad; auto y = model.forward(x); }  // records nothing
//
// The flag is per thread. Evaluation loops and optimizer updates run under it.
#pragma once

namespace tapegrad {

bool is_grad_enabled();
void set_grad_enabled(bool enabled);

// Grad mode set to `enabled` while it lives, as it was afterwards (torch.set_grad_enabled).
class GradModeGuard {
 public:
  explicit GradModeGuard(bool enabled) : previous_(is_grad_enabled()) { set_grad_enabled(enabled); }
  ~GradModeGuard() { set_grad_enabled(previous_); }
  GradModeGuard(const GradModeGuard&) = delete;
  GradModeGuard& operator=(const GradModeGuard&) = delete;

 private:
  bool previous_;
};

class NoGradGuard {
 public:
  NoGradGuard() : previous_(is_grad_enabled()) { set_grad_enabled(false); }
  ~NoGradGuard() { set_grad_enabled(previous_); }
  NoGradGuard(const NoGradGuard&) = delete;
  NoGradGuard& operator=(const NoGradGuard&) = delete;

 private:
  bool previous_;
};

}  // namespace tapegrad
