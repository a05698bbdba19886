// Exercise 4: a reduction with broadcasting, sum_to_shape. Read README.md beside this file first.
//
// Part 1: sum_to_shape(grad, shape), with tapegrad's ops (tapegrad::sum over a list of dims,
// reshape). Part 2: the backward of add_op and mul_op, whose forward and record() call are given:
// return {dL/da, dL/db}, each of its input's shape. Replace each `throw Todo(...)`.
// tapegrad::sum_to_shape is the library's own answer: your function is checked against it, so
// do not call it. Call yours as learn::sum_to_shape: on tapegrad's Tensors a plain
// sum_to_shape(...) also finds tapegrad's, and the compiler says the call is ambiguous.
#include "04_sum_to_shape/exercise.hpp"

#include "grading/todo.hpp"

namespace learn {

using tapegrad::Shape;
using tapegrad::Tensor;
using tapegrad::TensorList;

Tensor sum_to_shape(const Tensor& grad, const Shape& shape) {
  (void)grad, (void)shape;
  throw Todo("TODO exercise 4: sum_to_shape: return grad summed over the dims that broadcasting added or "
             "stretched, with exactly the given shape");
}

Tensor add_op(const Tensor& a, const Tensor& b) {
  Tensor out = unrecorded([&] { return tapegrad::add(a, b); });  // the forward, given
  if (!tapegrad::should_record({a, b})) return out;
  tapegrad::record(out, "add_op", {a, b}, [a_shape = a.shape(), b_shape = b.shape()](const Tensor& dout) -> TensorList {
    (void)a_shape, (void)b_shape, (void)dout;
    throw Todo("TODO exercise 4, part 2: the backward of a + b with broadcasting: return {dL/da, dL/db}, "
               "each of its input's shape");
  }, tapegrad::DoubleBackward::supported, tapegrad::Saves::nothing);
  return out;
}

Tensor mul_op(const Tensor& a, const Tensor& b) {
  Tensor out = unrecorded([&] { return tapegrad::mul(a, b); });  // the forward, given
  if (!tapegrad::should_record({a, b})) return out;
  tapegrad::record(out, "mul_op", {a, b}, [a, b](const Tensor& dout) -> TensorList {
    (void)a, (void)b, (void)dout;
    throw Todo("TODO exercise 4, part 2: the backward of a * b with broadcasting: return {dL/da, dL/db}, "
               "each of its input's shape");
  }, tapegrad::DoubleBackward::supported, tapegrad::Saves::inputs);
  return out;
}

}  // namespace learn
