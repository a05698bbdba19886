// Exercise 8, solved: cross-entropy, the mean over N rows of −log softmax(row)[target].
//
// Forward. −log softmax(r)[t] = logsumexp(r) − r_t, and logsumexp is computed stably:
//   logsumexp(r) = m + log Σ exp(r − m),  m = max(r)
// so every exponent is ≤ 0 (no exp(1000) = inf), and the sum is ≥ 1 (no log(0) = −inf).
// Backward. ∂logsumexp(r)/∂r_j = exp(r_j − logsumexp(r)) = softmax(r)_j and ∂r_t/∂r_j = δ_jt,
// so each row's gradient is softmax(r) − one_hot(t); the mean divides every row's by N, and the
// chain rule multiplies by g = dL/dloss:
//   dL/dlogits = g · (softmax(logits) − one_hot(targets)) / N
// The backward keeps the logits and each row's logsumexp: softmax is recomputed from them, one
// exp per element, rather than saved (save memory at the cost of compute).
#include "08_cross_entropy/exercise.hpp"

namespace learn {

using namespace tapegrad;

Tensor cross_entropy(const Tensor& logits, const Tensor& targets) {
  const Tensor target_mask = one_hot(targets, logits.shape().back());  // (N, C): 1 at each target
  Tensor loss, lse;  // the loss, a scalar; each row's logsumexp, (N, 1)
  {
    NoGradGuard no_grad;  // the ops below are not recorded: this function records one node
    const Tensor m = max(logits, -1, true);
    lse = m + log(sum(exp(logits - m), {-1}, true));
    loss = mean(lse - sum(logits * target_mask, {-1}, true));
  }
  if (!should_record({logits})) return loss;
  record(loss, "learn.cross_entropy", {logits}, [logits, lse, target_mask](const Tensor& g) -> TensorList {
    const double n = static_cast<double>(logits.shape()[0]);
    return {g * (exp(logits - lse) - target_mask) / n};
  }, DoubleBackward::unsupported, Saves::inputs);
  return loss;
}

}  // namespace learn
