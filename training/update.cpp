// update.cpp — the update step.
#include "update.hpp"

#include <cmath>

#include "../autograd/ops.hpp"
#include "../optim/clip_grad.hpp"
#include "../optim/health.hpp"

namespace tapegrad::training {

UpdateResult update(optim::Optimizer& optimizer, std::int64_t micro_batches,
                    const std::function<Tensor(std::int64_t)>& loss_of, const nn::NamedTensors& params, double clip,
                    const UpdateHooks& hooks) {
  if (micro_batches < 1)
    throw ValueError("training::update: micro_batches must be at least 1, got " + std::to_string(micro_batches));
  optimizer.zero_grad();
  double loss_sum = 0;
  Tensor loss;  // the last micro-batch's, or the batch's mean when there are several
  for (std::int64_t k = 0; k < micro_batches; ++k) {
    const bool last = k + 1 == micro_batches;
    Tensor micro = loss_of(k);
    if (hooks.before_backward) hooks.before_backward(last);
    if (micro_batches == 1) micro.backward();
    else (micro * (1.0 / static_cast<double>(micro_batches))).backward();
    loss_sum += micro.item();
    loss = micro;
  }
  const double mean_loss = loss_sum / static_cast<double>(micro_batches);
  if (micro_batches > 1) loss = full({}, mean_loss, DType::float64);  // what the health check judges
  if (hooks.after_backward) hooks.after_backward();
  const optim::HealthReport health = optim::check_health(loss, params);
  if (!health.ok) return {NAN, mean_loss, health.message, ""};
  const double norm = clip > 0 ? optim::clip_grad_norm_(params, clip) : optim::grad_norm(params);
  if (hooks.skip)
    if (std::string why = hooks.skip(mean_loss, norm); !why.empty()) return {norm, mean_loss, "", why};
  if (hooks.step) hooks.step();
  else optimizer.step();
  return {norm, mean_loss, "", ""};
}

UpdateResult update(optim::Optimizer& optimizer, const Tensor& loss, const nn::NamedTensors& params, double clip,
                    const std::function<void()>& after_backward) {
  UpdateHooks hooks;
  hooks.after_backward = after_backward;
  return update(optimizer, 1, [&](std::int64_t) { return loss; }, params, clip, hooks);
}

}  // namespace tapegrad::training
