// anomaly.hpp — find the first op that produced NaN or Inf, forward or backward.
//
//   tapegrad::AnomalyModeGuard detect;   // like torch.autograd.detect_anomaly()
//   loss = model.forward(x); loss.backward();
//   // throws AnomalyError: "anomaly: forward of 'exp' in module 'blocks.1.ffn' produced
//   //  NaN/Inf (output shape [2, 5, 32])"
//
// When on, every recorded op checks its output, and the backward pass checks every
// gradient it computes. The module path comes from the ModuleScope that nn modules open in
// their forward. Off by default: the checks read every element.
#pragma once

#include <string>

#include "errors.hpp"

namespace tapegrad {

class AnomalyError : public Error {
 public:
  using Error::Error;
};

bool is_anomaly_enabled();
void set_anomaly_enabled(bool enabled);

class AnomalyModeGuard {
 public:
  explicit AnomalyModeGuard(bool enabled = true) : previous_(is_anomaly_enabled()) { set_anomaly_enabled(enabled); }
  ~AnomalyModeGuard() { set_anomaly_enabled(previous_); }
  AnomalyModeGuard(const AnomalyModeGuard&) = delete;
  AnomalyModeGuard& operator=(const AnomalyModeGuard&) = delete;

 private:
  bool previous_;
};

// The dotted path of the module whose forward is running ("" outside any module).
const std::string& current_module_path();

// Pushes a module path for the duration of a forward (cheap when anomaly mode is off).
class ModuleScope {
 public:
  explicit ModuleScope(const std::string& path);
  ~ModuleScope();
  ModuleScope(const ModuleScope&) = delete;
  ModuleScope& operator=(const ModuleScope&) = delete;

 private:
  bool active_;
};

}  // namespace tapegrad
