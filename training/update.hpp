// update.hpp — one optimizer update from the loss of a batch, as every training loop here
// does it:
//
//   zero the gradients; backward; after_backward() (data-parallel runs average the gradients
//   there); check that the loss and every gradient are finite; clip at `clip` (0: no
//   clipping, the norm is still measured); step.
//
// A non-finite loss or gradient skips the step and says where it was (optim/health.hpp):
// the caller decides whether the run stops (train_lm), or is recorded as diverged (studies).
#pragma once

#include <functional>
#include <string>

#include "../nn/module.hpp"
#include "../optim/optimizer.hpp"

namespace tapegrad::training {

struct UpdateResult {
  double grad_norm = 0;  // the global L2 norm of the gradients, before clipping (NaN when skipped)
  std::string problem;   // empty: the step was taken; else the first non-finite value, named
  bool ok() const { return problem.empty(); }
};

UpdateResult update(optim::Optimizer& optimizer, const Tensor& loss, const nn::NamedTensors& params, double clip,
                    const std::function<void()>& after_backward = {});

}  // namespace tapegrad::training
