// layer_norm.cpp — exercise 7's given part: layer_norm's forward over the last dim, and the one
// node it records, whose backward calls the three functions the student writes in exercise.cpp
// (declared in exercise.hpp). Built with the solution and with the stub alike.
//   μ, σ² = each row's mean and (biased, as PyTorch) variance;  rstd = 1/√(σ² + ε)
//   x̂ = (x − μ) · rstd;  y = γ ⊙ x̂ + β
#include "07_layer_norm/exercise.hpp"

namespace learn {

using namespace tapegrad;

Tensor layer_norm(const Tensor& x, const Tensor& gamma, const Tensor& beta, double eps) {
  Tensor y, xhat, rstd;
  {
    NoGradGuard no_grad;  // the ops below are not recorded: this function records one node
    const Tensor centered = x - mean(x, {-1}, true);
    rstd = rsqrt(mean(centered * centered, {-1}, true) + eps);  // 1/√(σ² + ε), one per row
    xhat = centered * rstd;
    y = xhat * gamma + beta;
  }
  if (!should_record({x, gamma, beta})) return y;
  // the backward keeps x̂ and rstd (computed, not recomputed) and γ
  record(y, "learn.layer_norm", {x, gamma, beta}, [xhat, rstd, gamma](const Tensor& g) -> TensorList {
    const Tensor dbeta = layer_norm_dbeta(g);
    const Tensor dgamma = layer_norm_dgamma(g, xhat);
    return {layer_norm_dx(g, xhat, rstd, gamma), dgamma, dbeta};
  }, DoubleBackward::unsupported, Saves::inputs);
  return y;
}

}  // namespace learn
