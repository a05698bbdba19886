// Exercise 3: matmul's backward. Read README.md beside this file first.
//
// Each op computes C (the forward, written for you, with tapegrad's matmul under NoGradGuard so
// that tapegrad records nothing itself) and records one node with record(). The backward
// function receives dC = dL/dC and returns {dL/dA, dL/dB}, each shaped like its input.
// Replace each `throw Todo(...)` with that return. tapegrad's ops (tapegrad::matmul,
// tapegrad::transpose, tapegrad::sum, reshape) may be used inside it; tapegrad::matmul's own
// gradient may not: it is what your answer is checked against.
#include "03_matmul_backward/exercise.hpp"

#include "grading/todo.hpp"

namespace learn {

using tapegrad::Tensor;
using tapegrad::TensorList;

Tensor matmul_op(const Tensor& a, const Tensor& b) {
  Tensor c = product_unrecorded("matmul_op", a, b, 2);  // the forward, given
  if (!tapegrad::should_record({a, b})) return c;
  tapegrad::record(c, "matmul_op", {a, b}, [a, b](const Tensor& dc) -> TensorList {
    (void)a, (void)b, (void)dc;
    throw Todo("TODO exercise 3: the backward of C = A·B: return {dL/dA, dL/dB} from dC = dL/dC");
  }, tapegrad::DoubleBackward::supported, tapegrad::Saves::inputs);
  return c;
}

Tensor batched_matmul_op(const Tensor& a, const Tensor& b) {
  Tensor c = product_unrecorded("batched_matmul_op", a, b, 3);  // the forward, given: B serves every A[i]
  if (!tapegrad::should_record({a, b})) return c;
  tapegrad::record(c, "batched_matmul_op", {a, b}, [a, b](const Tensor& dc) -> TensorList {
    (void)a, (void)b, (void)dc;
    throw Todo("TODO exercise 3, part 2: the backward of C[i] = A[i]·B with one B for the whole batch: "
               "return {dL/dA, dL/dB} from dC = dL/dC");
  }, tapegrad::DoubleBackward::supported, tapegrad::Saves::inputs);
  return c;
}

}  // namespace learn
