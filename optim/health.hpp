// health.hpp — numerical health checks for the training loop: is the loss finite, and which
// parameter's gradient (or value) first went NaN/Inf?
//
//   loss.backward();
//   optim::HealthReport health = optim::check_health(loss, model->named_parameters());
//   if (!health.ok) { std::cerr << health.message << "\n"; break; }   // or require_healthy(...)
//
// The order of the checks is the order in which bad values spread: the loss, then every
// gradient in parameter order, then (when asked) every parameter's values. The first failure
// is reported, with its name and its NaN and Inf counts:
//   "non-finite gradient of 'blocks.1.ffn.fc2.weight': 3 NaN, 0 Inf of 512 elements [16, 32]"
// Anomaly mode (autograd/anomaly.hpp) then finds the op that made it.
#pragma once

#include <cstdint>
#include <string>

#include "../autograd/errors.hpp"
#include "../autograd/tensor.hpp"
#include "../nn/module.hpp"

namespace tapegrad::optim {

// A NaN or Inf where finite numbers were required.
class NonFiniteError : public Error {
 public:
  using Error::Error;
};

struct NonFiniteCount {
  std::int64_t nan = 0;
  std::int64_t inf = 0;  // +Inf and −Inf
  bool finite() const { return nan == 0 && inf == 0; }
};
// Counts the NaN and Inf elements of a float tensor (any strides).
NonFiniteCount count_nonfinite(const Tensor& t);

struct HealthReport {
  bool ok = true;
  std::string where;    // "loss", "gradient" or "value" (empty when ok)
  std::string name;     // the parameter's name ("loss" for the loss; empty when ok)
  NonFiniteCount count;  // of that tensor
  std::string message;  // one sentence (empty when ok)
};

// Checks the loss (skipped when undefined), every defined gradient of params and, when
// check_values, every parameter; reports the first non-finite one.
HealthReport check_health(const Tensor& loss, const nn::NamedTensors& params, bool check_values = false);
// The same, throwing NonFiniteError with the report's message.
void require_healthy(const Tensor& loss, const nn::NamedTensors& params, bool check_values = false);

}  // namespace tapegrad::optim
