// Exercise 7: layer_norm's backward. Read README.md beside this file first.
//
// layer_norm (given, in the library's learn/07_layer_norm/layer_norm.cpp) computes its forward
// with tapegrad's ops while grad mode is off and records ONE node whose backward calls your
// three functions. Each receives g = dL/dy and what
// the forward saved, and returns one gradient. Replace each `throw Todo(...)` with that.
// Useful ops (autograd/ops.hpp): mean(t, {-1}, true) (each row's mean, kept as a size-1 dim),
// sum_to_shape(t, shape) (sums t over the dims that broadcasting added), + - * between tensors.
#include "07_layer_norm/exercise.hpp"

#include "grading/todo.hpp"

namespace learn {

using namespace tapegrad;

Tensor layer_norm_dbeta(const Tensor& g) {
  (void)g;
  throw Todo("TODO exercise 7: dL/dβ: return g summed over every row, shape (C)");
}

Tensor layer_norm_dgamma(const Tensor& g, const Tensor& xhat) {
  (void)g, (void)xhat;
  throw Todo("TODO exercise 7: dL/dγ: return g * x̂ summed over every row, shape (C)");
}

Tensor layer_norm_dx(const Tensor& g, const Tensor& xhat, const Tensor& rstd, const Tensor& gamma) {
  (void)g, (void)xhat, (void)rstd, (void)gamma;
  throw Todo("TODO exercise 7: dL/dx: return rstd * (ĝ - mean(ĝ) - x̂ * mean(ĝ * x̂)) with ĝ = g * γ and the means "
             "over each row");
}

}  // namespace learn
