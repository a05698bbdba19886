// Exercise 6, solved: softmax and log-softmax over the last dim, each one node on the tape.
//
// Forward. softmax(x) = softmax(x − c) for any c per row (the factor exp(−c) cancels), so with
// c = m = the row's max every exponent is ≤ 0 and exp never overflows: the largest term is
// exp(0) = 1, so the sum lies in [1, n] and its log is finite too.
//   y = exp(x − m) / Σ exp(x − m)          z = log y = (x − m) − log Σ exp(x − m)
// Backward, for L with g = dL/dy (or dL/dz). ∂y_i/∂x_j = y_i (δ_ij − y_j), so
//   dx_j = Σ_i g_i y_i (δ_ij − y_j) = y_j (g_j − Σ_i g_i y_i)             (softmax)
// and ∂z_i/∂x_j = δ_ij − y_j, so
//   dx_j = Σ_i g_i (δ_ij − y_j) = g_j − y_j Σ_i g_i,  y = exp(z)           (log_softmax)
// Both use only the op's output, so the node saves the output alone, and being written with
// differentiable ops on saved_output, the backward can itself be differentiated.
#include "06_softmax/exercise.hpp"

namespace learn {

using namespace tapegrad;

Tensor softmax(const Tensor& x) {
  Tensor y;
  {
    NoGradGuard no_grad;  // the ops below are not recorded: this function records one node
    const Tensor e = exp(x - max(x, -1, true));  // every exponent ≤ 0: no overflow
    y = e / sum(e, {-1}, true);
  }
  if (!should_record({x})) return y;
  record(y, "learn.softmax", {x}, [saved = y.detach()](const Tensor& g) -> TensorList {
    const Tensor y = saved_output(saved);
    return {y * (g - sum(g * y, {-1}, true))};
  }, DoubleBackward::supported, Saves::output);
  return y;
}

Tensor log_softmax(const Tensor& x) {
  Tensor z;
  {
    NoGradGuard no_grad;
    const Tensor shifted = x - max(x, -1, true);  // ≤ 0, its max exactly 0
    z = shifted - log(sum(exp(shifted), {-1}, true));
  }
  if (!should_record({x})) return z;
  record(z, "learn.log_softmax", {x}, [saved = z.detach()](const Tensor& g) -> TensorList {
    const Tensor z = saved_output(saved);
    return {g - exp(z) * sum(g, {-1}, true)};
  }, DoubleBackward::supported, Saves::output);
  return z;
}

}  // namespace learn
