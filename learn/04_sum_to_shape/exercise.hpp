// exercise.hpp — exercise 4: sum_to_shape, the reduction that undoes broadcasting in a backward,
// and the broadcasting add and mul whose backward uses it. The student writes them in exercise.cpp.
#pragma once

#include <tapegrad/tapegrad.hpp>

namespace learn {

// The gradient of an input of `shape` that the forward broadcast to grad's shape: grad summed
// over the leading dims that broadcasting added and over the dims where `shape` has size 1 (and
// grad does not), kept as size 1. The result has exactly `shape`. [2, 3] to [3] sums dim 0;
// [2, 4, 3] to [4, 1] sums dim 0 away and dim 2 into size 1; [2, 3] to [] sums everything.
tapegrad::Tensor sum_to_shape(const tapegrad::Tensor& grad, const tapegrad::Shape& shape);

// a + b and a * b with NumPy broadcasting ([2, 3] + [3], [2, 1, 3] * [4, 1]), each recording
// its own node on tapegrad's tape; their backward brings each gradient back with sum_to_shape.
tapegrad::Tensor add_op(const tapegrad::Tensor& a, const tapegrad::Tensor& b);
tapegrad::Tensor mul_op(const tapegrad::Tensor& a, const tapegrad::Tensor& b);

// The forward of both ops (given): f() with recording off, so that the op records only its own node.
template <typename F>
tapegrad::Tensor unrecorded(F f) {
  tapegrad::NoGradGuard no_grad;
  return f();
}

}  // namespace learn
