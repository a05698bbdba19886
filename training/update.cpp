// update.cpp — the update step.
#include "update.hpp"

#include <cmath>

#include "../optim/clip_grad.hpp"
#include "../optim/health.hpp"

namespace tapegrad::training {

UpdateResult update(optim::Optimizer& optimizer, const Tensor& loss, const nn::NamedTensors& params, double clip,
                    const std::function<void()>& after_backward) {
  optimizer.zero_grad();
  loss.backward();
  if (after_backward) after_backward();
  const optim::HealthReport health = optim::check_health(loss, params);
  if (!health.ok) return {NAN, health.message};
  const double norm = clip > 0 ? optim::clip_grad_norm_(params, clip) : optim::grad_norm(params);
  optimizer.step();
  return {norm, ""};
}

}  // namespace tapegrad::training
