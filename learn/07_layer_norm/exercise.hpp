// exercise.hpp — exercise 7: layer_norm over the last dim as one node on tapegrad's tape. The
// forward is given; the student writes the three gradients in exercise.cpp.
//   μ, σ² = the mean and the (biased) variance of each row (the last dim)
//   x̂ = (x − μ) · rstd,  rstd = 1/√(σ² + ε),     y = γ ⊙ x̂ + β
#pragma once

#include <tapegrad/tapegrad.hpp>

namespace learn {

// x: (..., C) float64; gamma, beta: (C). Its backward calls the three functions below.
tapegrad::Tensor layer_norm(const tapegrad::Tensor& x, const tapegrad::Tensor& gamma, const tapegrad::Tensor& beta,
                            double eps = 1e-5);

// The backward, given g = dL/dy (..., C), the forward's x̂ (..., C) and rstd (..., 1):
// dL/dβ (C): g summed over every row
tapegrad::Tensor layer_norm_dbeta(const tapegrad::Tensor& g);
// dL/dγ (C): g ⊙ x̂ summed over every row
tapegrad::Tensor layer_norm_dgamma(const tapegrad::Tensor& g, const tapegrad::Tensor& xhat);
// dL/dx (..., C) = rstd · (ĝ − mean(ĝ) − x̂ · mean(ĝ ⊙ x̂)), ĝ = g ⊙ γ, the means over each row
tapegrad::Tensor layer_norm_dx(const tapegrad::Tensor& g, const tapegrad::Tensor& xhat, const tapegrad::Tensor& rstd,
                               const tapegrad::Tensor& gamma);

}  // namespace learn
