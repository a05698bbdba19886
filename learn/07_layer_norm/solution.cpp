// Exercise 7, solved: layer_norm's backward over the last dim (C entries per row).
//
// y = γ ⊙ x̂ + β: β and γ are shared by every row, so their gradients sum over the rows:
//   dβ = Σ_rows g,       dγ = Σ_rows g ⊙ x̂
// x̂ = (x − μ)·r with r = 1/√(σ² + ε). Within a row, with ĝ = g ⊙ γ = dL/dx̂,
//   ∂μ/∂x_j = 1/C,   ∂r/∂x_j = −r³ (x_j − μ)/C = −r² x̂_j / C,
//   ∂x̂_i/∂x_j = r (δ_ij − 1/C) − x̂_i r x̂_j / C,
// so dx_j = Σ_i ĝ_i ∂x̂_i/∂x_j = r (ĝ_j − mean(ĝ) − x̂_j mean(ĝ ⊙ x̂)).
// The two means are projections: dx has no part along (1, …, 1) (a shift of the row changes
// nothing) and, when ε = 0, none along x̂ (nor does a scaling).
#include "07_layer_norm/exercise.hpp"

namespace learn {

using namespace tapegrad;

Tensor layer_norm_dbeta(const Tensor& g) { return sum_to_shape(g, {g.shape().back()}); }

Tensor layer_norm_dgamma(const Tensor& g, const Tensor& xhat) { return sum_to_shape(g * xhat, {g.shape().back()}); }

Tensor layer_norm_dx(const Tensor& g, const Tensor& xhat, const Tensor& rstd, const Tensor& gamma) {
  const Tensor ghat = g * gamma;  // dL/dx̂
  return rstd * (ghat - mean(ghat, {-1}, true) - xhat * mean(ghat * xhat, {-1}, true));
}

}  // namespace learn
