// measures.cpp — the norm and the token cosine of measures.hpp.
#include "measures.hpp"

#include <cmath>
#include <string>

#include "../../autograd/errors.hpp"
#include "../../autograd/grad_mode.hpp"
#include "../../autograd/ops.hpp"

namespace tapegrad::nn {

double l2_norm(const Tensor& t) {
  double s = 0;
  for (double v : t.to_vector()) s += v * v;
  return std::sqrt(s);
}

double mean_token_cosine(const Tensor& a, const Tensor& b, const char* op) {
  if (a.shape() != b.shape() || a.dim() == 0)
    throw ShapeError(std::string(op) + ": the cosine compares two streams (..., C) of one shape, got " +
                     shape_str(a.shape()) + " and " + shape_str(b.shape()));
  NoGradGuard no_grad;
  const std::int64_t C = a.size(-1);
  const Tensor a2 = a.reshape({-1, C}), b2 = b.reshape({-1, C});
  const Tensor dot = sum(mul(a2, b2), {1});
  const Tensor norms = mul(sqrt(sum(mul(a2, a2), {1})), sqrt(sum(mul(b2, b2), {1})));
  return mean(div(dot, clamp(norms, 1e-12, std::nullopt))).item();
}

}  // namespace tapegrad::nn
