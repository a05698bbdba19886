// clip_grad.hpp — gradient clipping, as torch.nn.utils.clip_grad_norm_ / clip_grad_value_.
//
//   clip_grad_norm_:  N = (Σ over all parameters and elements |g|^p)^(1/p)   (p = 2: global L2 norm;
//                     p = inf: max |g|); every gradient is scaled by c = max_norm / (N + 1e-6)
//                     when c < 1. Returns N, the norm before clipping.
//   clip_grad_value_: g = clamp(g, −clip_value, clip_value) elementwise.
//
// Call them between backward() and step(); parameters without a gradient are skipped. A
// non-finite norm (a NaN or Inf gradient) raises NonFiniteError naming the first bad parameter
// when error_if_nonfinite is true; otherwise, as in PyTorch, the gradients are scaled by the
// non-finite coefficient (NaN norm: all NaN) and the returned norm says so — a training loop
// can test std::isfinite(norm) and skip the step. Sums are accumulated in double, in fixed
// chunks, so the result does not depend on the number of threads.
#pragma once

#include <vector>

#include "../nn/diagnostics/grad_norms.hpp"
#include "health.hpp"
#include "optimizer.hpp"

namespace tapegrad::optim {

double clip_grad_norm_(const NamedTensors& params, double max_norm, double norm_type = 2.0,
                       bool error_if_nonfinite = false);
// Unnamed parameters are named by position ("parameter 3") in errors.
double clip_grad_norm_(const std::vector<Tensor>& params, double max_norm, double norm_type = 2.0,
                       bool error_if_nonfinite = false);

void clip_grad_value_(const NamedTensors& params, double clip_value);
void clip_grad_value_(const std::vector<Tensor>& params, double clip_value);

// The norm clip_grad_norm_ measures, without clipping: nn::grad_norm, which lives in nn's
// diagnostics so that nn::total_grad_norm can use it too (nn is below optim).
using nn::grad_norm;

}  // namespace tapegrad::optim
