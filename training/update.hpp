// update.hpp — one optimizer update from the loss of a batch, as every training loop here
// does it:
//
//   zero the gradients; backward (once per micro-batch with gradient accumulation);
//   after_backward() (data-parallel runs finish averaging the gradients there); check that the
//   loss and every gradient are finite; clip at `clip` (0: no clipping, the norm is still
//   measured); step, unless skip() refuses it (a loss spike, training/spike_guard.hpp).
//
// Gradient accumulation: a batch of B rows runs as N micro-batches of B/N rows, one forward
// and backward each, so that only one micro-batch's activations are alive at a time. Each
// micro-batch's loss is the mean over its own tokens; backward runs on loss_k / N, so the
// summed gradient is that of the mean over the whole batch (equal-sized micro-batches):
//
//   ∇ (1/N) Σ_k L_k = ∇ L_batch,   L_k = mean loss over micro-batch k.
//
// A non-finite loss or gradient skips the step and says where it was (optim/health.hpp):
// the caller decides whether the run stops (train_lm), or is recorded as diverged (studies).
// Every backward pass runs before the check, also after a non-finite micro-batch: in a
// data-parallel run every rank must take part in the same collectives.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "../nn/module.hpp"
#include "../optim/optimizer.hpp"

namespace tapegrad::training {

struct UpdateResult {
  double grad_norm = 0;  // the global L2 norm of the gradients, before clipping (NaN when skipped)
  double loss = 0;       // the batch's loss: the mean of the micro-batches' losses
  std::string problem;   // empty: no non-finite value; else the first one, named (no step)
  std::string skipped;   // empty: the step was taken; else why hooks.skip refused it
  bool ok() const { return problem.empty(); }
};

// What a distributed run adds to the update. Each is optional.
struct UpdateHooks {
  // Before micro-batch k's backward, with whether it is the last of the step: data-parallel
  // runs communicate only in the last one (DistributedDataParallel::no_sync() for the others).
  std::function<void(bool last)> before_backward;
  // After the last backward: data-parallel runs wait there for the averaged gradients.
  std::function<void()> after_backward;
  // Replaces optimizer.step() (ZeRO-1: each rank steps its own shard, then all share it).
  std::function<void()> step;
  // Asked with the batch's loss and the gradient norm (before clipping) once both are finite:
  // a non-empty answer skips the step and is returned as UpdateResult::skipped (SpikeGuard).
  // Every rank of a data-parallel run must give the same answer.
  std::function<std::string(double loss, double grad_norm)> skip;
};

// One update from micro_batches forward/backward passes: loss_of(k) computes micro-batch k's
// mean loss (k = 0 .. micro_batches-1; its graph is freed by its backward before the next).
UpdateResult update(optim::Optimizer& optimizer, std::int64_t micro_batches,
                    const std::function<Tensor(std::int64_t)>& loss_of, const nn::NamedTensors& params, double clip,
                    const UpdateHooks& hooks = {});

// The same for one batch whose loss is already computed.
UpdateResult update(optim::Optimizer& optimizer, const Tensor& loss, const nn::NamedTensors& params, double clip,
                    const std::function<void()>& after_backward = {});

}  // namespace tapegrad::training
