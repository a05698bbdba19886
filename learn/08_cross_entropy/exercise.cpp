// Exercise 8: cross-entropy. Read README.md beside this file first.
//
// cross_entropy computes its forward with tapegrad's ops while grad mode is off (they record
// nothing) and records ONE node whose backward you write: given g = dL/dloss (a scalar tensor),
// it returns {dL/dlogits}. Replace each `throw Todo(...)` with that code.
// Useful ops (autograd/ops.hpp): max(t, -1, true), sum(t, {-1}, true), mean(t), exp, log,
// and + - * / between tensors (a size-1 dim broadcasts). one_hot (given) is the targets' mask.
#include "08_cross_entropy/exercise.hpp"

#include "grading/todo.hpp"

namespace learn {

using namespace tapegrad;

Tensor cross_entropy(const Tensor& logits, const Tensor& targets) {
  const Tensor target_mask = one_hot(targets, logits.shape().back());  // (N, C): 1 at each target
  Tensor loss, lse;  // the loss, a scalar; each row's logsumexp, (N, 1)
  {
    NoGradGuard no_grad;  // the ops below are not recorded: this function records one node
    (void)target_mask;
    throw Todo("TODO exercise 8: the forward: set lse = m + log(Σ exp(logits - m)) per row, m = max(logits, -1, "
               "true), and loss = the mean over the rows of lse - the target's logit (Σ logits * target_mask)");
  }
  if (!should_record({logits})) return loss;
  record(loss, "learn.cross_entropy", {logits}, [logits, lse, target_mask](const Tensor& g) -> TensorList {
    (void)logits, (void)lse, (void)target_mask, (void)g;
    throw Todo("TODO exercise 8: the backward: return {dL/dlogits} = g * (softmax(logits) - target_mask) / N, with "
               "softmax(logits) = exp(logits - lse)");
  }, DoubleBackward::unsupported, Saves::inputs);
  return loss;
}

}  // namespace learn
