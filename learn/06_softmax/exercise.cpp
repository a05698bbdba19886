// Exercise 6: softmax and log-softmax, numerically stable. Read README.md beside this file first.
//
// Each function computes its forward with tapegrad's ops while grad mode is off (so they
// record nothing), then records ONE node on the tape whose backward you write: given
// g = dL/d(out), it returns {dL/dx}. Replace each `throw Todo(...)` with that code.
// Useful ops (all in tapegrad's autograd/ops.hpp): max(x, -1, true), sum(x, {-1}, true),
// exp, log, and + - * / between tensors (a size-1 last dim broadcasts over the row).
#include "06_softmax/exercise.hpp"

#include "grading/todo.hpp"

namespace learn {

using namespace tapegrad;

Tensor softmax(const Tensor& x) {
  Tensor y;
  {
    NoGradGuard no_grad;  // the ops below are not recorded: this function records one node
    throw Todo("TODO exercise 6: softmax's forward: set y = exp(x - m) / (Σ exp(x - m)) over the last dim, "
               "with m = max(x, -1, true) the row's max");
  }
  if (!should_record({x})) return y;
  record(y, "learn.softmax", {x}, [saved = y.detach()](const Tensor& g) -> TensorList {
    const Tensor y = saved_output(saved);  // softmax's output, saved by the forward
    (void)y, (void)g;
    throw Todo("TODO exercise 6: softmax's backward: return {dx}, dx = y * (g - Σ (g * y)) with the sum over the "
               "last dim");
  }, DoubleBackward::supported, Saves::output);
  return y;
}

Tensor log_softmax(const Tensor& x) {
  Tensor z;
  {
    NoGradGuard no_grad;
    throw Todo("TODO exercise 6: log_softmax's forward: set z = x - m - log(Σ exp(x - m)) over the last dim, "
               "with m = max(x, -1, true)");
  }
  if (!should_record({x})) return z;
  record(z, "learn.log_softmax", {x}, [saved = z.detach()](const Tensor& g) -> TensorList {
    const Tensor z = saved_output(saved);  // log_softmax's output: exp(z) is softmax(x)
    (void)z, (void)g;
    throw Todo("TODO exercise 6: log_softmax's backward: return {dx}, dx = g - exp(z) * Σ g with the sum over the "
               "last dim");
  }, DoubleBackward::supported, Saves::output);
  return z;
}

}  // namespace learn
