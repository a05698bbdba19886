// health.cpp — counting NaN/Inf elements and reporting the first non-finite tensor by name.
#include "health.hpp"

#include <cmath>

#include "../autograd/cpu/parallel.hpp"

namespace tapegrad::optim {

namespace {

template <typename T>
NonFiniteCount count_kernel(const T* x, std::int64_t n) {
  std::int64_t nan = 0, inf = 0;
  parallel_region_if(n > kParallelGrain, [&] {
#pragma omp for reduction(+ : nan, inf)
    for (std::int64_t i = 0; i < n; ++i) {
      nan += std::isnan(x[i]) ? 1 : 0;
      inf += std::isinf(x[i]) ? 1 : 0;
    }
  });
  return {nan, inf};
}

}  // namespace

NonFiniteCount count_nonfinite(const Tensor& t) {
  const Tensor dense = t.is_contiguous() ? t : t.detach().contiguous();
  return dispatch_floating(dense.dtype(), "count_nonfinite",
                           [&]<typename T>() { return count_kernel(dense.data<T>(), dense.numel()); });
}

namespace {

HealthReport bad(const std::string& where, const std::string& name, const Tensor& t, NonFiniteCount count) {
  HealthReport r;
  r.ok = false;
  r.where = where;
  r.name = name;
  r.count = count;
  const std::string of = std::to_string(count.nan) + " NaN, " + std::to_string(count.inf) + " Inf of " +
                         std::to_string(t.numel()) + " elements " + shape_str(t.shape());
  r.message = where == "loss" ? "non-finite loss: " + of : "non-finite " + where + " of '" + name + "': " + of;
  return r;
}

}  // namespace

HealthReport check_health(const Tensor& loss, const nn::NamedTensors& params, bool check_values) {
  if (loss.defined()) {
    const NonFiniteCount c = count_nonfinite(loss);
    if (!c.finite()) return bad("loss", "loss", loss, c);
  }
  for (const auto& [name, p] : params) {
    const Tensor grad = p.grad();
    if (!grad.defined()) continue;
    const NonFiniteCount c = count_nonfinite(grad);
    if (!c.finite()) return bad("gradient", name, grad, c);
  }
  if (check_values) {
    for (const auto& [name, p] : params) {
      const NonFiniteCount c = count_nonfinite(p);
      if (!c.finite()) return bad("value", name, p, c);
    }
  }
  return {};
}

void require_healthy(const Tensor& loss, const nn::NamedTensors& params, bool check_values) {
  const HealthReport r = check_health(loss, params, check_values);
  if (!r.ok) throw NonFiniteError(r.message);
}

}  // namespace tapegrad::optim
