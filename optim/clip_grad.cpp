// clip_grad.cpp — the two in-place clipping functions. Formulas in clip_grad.hpp; the global
// gradient norm (deterministic chunked sums in double) is nn::grad_norm in nn/diagnostics/grad_norms.cpp.
#include "clip_grad.hpp"

#include <cmath>

#include "../autograd/cpu/parallel.hpp"

namespace tapegrad::optim {

namespace {

// Runs fn(data, n) on every defined gradient in place (through a dense copy for a strided one).
template <typename Fn>
void for_each_grad(const NamedTensors& params, const char* op, Fn&& fn) {
  for (const auto& [_, p] : params) {
    Tensor grad = p.grad();
    if (!grad.defined()) continue;
    Tensor dense = grad.is_contiguous() ? grad : grad.contiguous();
    dispatch_floating(dense.dtype(), op, [&]<typename T>() { fn(dense.template data<T>(), dense.numel()); });
    if (dense.is_same(grad)) grad.increment_version();  // written in place (a recorded .grad() may be saved)
    else grad.copy_(dense);
  }
}

NamedTensors named_by_position(const std::vector<Tensor>& params) {
  NamedTensors out;
  for (std::size_t i = 0; i < params.size(); ++i) out.emplace_back("parameter " + std::to_string(i), params[i]);
  return out;
}

}  // namespace

double clip_grad_norm_(const NamedTensors& params, double max_norm, double norm_type, bool error_if_nonfinite) {
  if (!(max_norm >= 0)) throw ValueError("clip_grad_norm_: max_norm " + number_str(max_norm) + " must be >= 0");
  nn::check_norm_type(norm_type, "clip_grad_norm_");
  const double total = grad_norm(params, norm_type);
  if (!std::isfinite(total) && error_if_nonfinite) {
    std::string culprit = "every gradient is finite: the sum overflowed";
    for (const auto& [name, p] : params) {
      if (!p.grad().defined()) continue;
      const NonFiniteCount c = count_nonfinite(p.grad());
      if (!c.finite()) {
        culprit = "first non-finite gradient: '" + name + "' with " + std::to_string(c.nan) + " NaN, " +
                  std::to_string(c.inf) + " Inf";
        break;
      }
    }
    throw NonFiniteError("clip_grad_norm_: the total norm of order " + number_str(norm_type) +
                         " of the gradients is " + number_str(total) + " (" + culprit +
                         "), so it cannot be clipped; to scale the gradients by it anyway, pass "
                         "error_if_nonfinite = false");
  }
  // c = max_norm / (N + 1e-6), applied only when it shrinks (c < 1), or when it is NaN, as
  // PyTorch's clamp(c, max=1) lets a NaN through.
  const double coef = max_norm / (total + 1e-6);
  if (coef < 1 || std::isnan(coef)) {
    for_each_grad(params, "clip_grad_norm_", [&]<typename T>(T* g, std::int64_t n) {
      const T c = T(coef);
      parallel_region_if(n > kParallelGrain, [&] {
#pragma omp for nowait
        for (std::int64_t i = 0; i < n; ++i) g[i] = g[i] * c;
      });
    });
  }
  return total;
}

double clip_grad_norm_(const std::vector<Tensor>& params, double max_norm, double norm_type,
                       bool error_if_nonfinite) {
  return clip_grad_norm_(named_by_position(params), max_norm, norm_type, error_if_nonfinite);
}

void clip_grad_value_(const NamedTensors& params, double clip_value) {
  if (!(clip_value >= 0))
    throw ValueError("clip_grad_value_: clip_value " + number_str(clip_value) + " must be >= 0");
  for_each_grad(params, "clip_grad_value_", [&]<typename T>(T* g, std::int64_t n) {
    const T hi = T(clip_value), lo = -hi;
    parallel_region_if(n > kParallelGrain, [&] {
#pragma omp for nowait
      for (std::int64_t i = 0; i < n; ++i) g[i] = g[i] < lo ? lo : (g[i] > hi ? hi : g[i]);
    });  // NaN stays NaN
  });
}

void clip_grad_value_(const std::vector<Tensor>& params, double clip_value) {
  clip_grad_value_(named_by_position(params), clip_value);
}

}  // namespace tapegrad::optim
