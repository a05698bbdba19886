// gradcheck.hpp — compare backward() with central finite differences, in float64.
//
//   auto f = [](const TensorList& in) { return mul(in[0], in[1]).sum(); };
//   GradcheckResult r = gradcheck(f, {randn({3}, gen, DType::float64).requires_grad_(), ...});
//   if (!r.ok) std::cerr << r.report;
//
// For every output element j and input element i, the analytic ∂out_j/∂in_i (one backward
// per output element) must agree with (f(x + eps·e_i) - f(x - eps·e_i))_j / (2·eps) within
// atol + rtol·|numerical| (PyTorch's torch.autograd.gradcheck defaults, designed for
// float64). That is the full Jacobian: keep the inputs small.
//
// fast_mode (PyTorch's fast_mode, "fast gradcheck"): one projection of the Jacobian J_k of
// each input k instead of all its entries,
//   analytic  vᵀJ_k u_k   (one backward, with v as the output's gradient),
//   numerical vᵀ(f(x_k + eps·u_k) - f(x_k - eps·u_k)) / (2·eps)   (two evaluations),
// for fixed random unit vectors u_k and v with positive entries. They must agree within
// atol·Σu_k·Σv + rtol·|numerical|: atol scaled by vᵀ(all ones)u, the bound the element-wise
// check puts on the same sum. Its cost is 2 + 2·(inputs) evaluations instead of
// 1 + (output elements) + 2·(input elements); a Jacobian that differs anywhere changes vᵀJu
// for almost every u and v, so a wrong backward still fails, but the report cannot name the
// element.
#pragma once

#include <functional>
#include <string>

#include "tensor.hpp"

namespace tapegrad {

struct GradcheckOptions {
  double eps = 1e-6;
  double atol = 1e-5;
  double rtol = 1e-3;
  bool fast_mode = false;  // a random projection vᵀJu per input instead of every entry
  // Forward mode too (PyTorch's check_forward_ad): jvp's J·e_i against the same central
  // differences, column by column (fast mode: vᵀ(J·u) per input), after the backward passes.
  bool check_forward_ad = false;
};

struct GradcheckResult {
  bool ok = true;
  double max_abs_error = 0;  // over all Jacobian entries (fast mode: over the projections vᵀJu)
  // "gradcheck passed ..." or a sentence naming the worst entry: which input, which element,
  // which output element, the analytic and numerical values.
  std::string report;
};

using GradcheckFn = std::function<Tensor(const TensorList&)>;

// Inputs must be float64 leaves; those that require grad are checked.
GradcheckResult gradcheck(const GradcheckFn& fn, const TensorList& inputs,
                          const GradcheckOptions& options = {});

// Second derivatives, as torch.autograd.gradgradcheck: gradcheck of the first derivative,
//   g(inputs) = ∂⟨fn(inputs), v⟩/∂inputs   (computed with grad(..., create_graph = true)),
// against central differences of g itself, for a fixed random v of fn's output shape. So the
// backward of every op on the way, run with create_graph, is checked to be differentiable
// and correct. g is small: its Jacobian has (elements of the inputs)² entries, or, with
// options.fast_mode, one projection per input.
GradcheckResult gradgradcheck(const GradcheckFn& fn, const TensorList& inputs,
                              const GradcheckOptions& options = {});

}  // namespace tapegrad
