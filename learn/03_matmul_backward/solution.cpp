// Exercise 3, solved: the backward of a matrix product.
//   C = A·B, C[i,j] = Σ_p A[i,p]·B[p,j]. A[i,p] appears in row i of C, multiplied by B[p,j] for
//   each j, so dL/dA[i,p] = Σ_j dC[i,j]·B[p,j] = (dC·Bᵀ)[i,p]. Likewise B[p,j] appears in
//   column j, multiplied by A[i,p] for each i: dL/dB[p,j] = Σ_i A[i,p]·dC[i,j] = (Aᵀ·dC)[p,j].
//   Shapes agree by construction: (m,n)·(n,k) is A's (m,k), (k,m)·(m,n) is B's (k,n).
// Batched with one B: C[b] = A[b]·B. Each A[b] has its own dA[b] = dC[b]·Bᵀ, but B is used by
//   every batch element (fan-out), so its gradient is the sum of theirs: dB = Σ_b A[b]ᵀ·dC[b].
//   Stacking the batch's rows, A as (batch·m, k) and dC as (batch·m, n), that sum is one product.
// Both gradients are computed even when one input needs none (a constant B): tapegrad's own
// matmul skips that product (the node's needs_input_grad); here the formula stays in plain view.
// Both backwards are written with tapegrad's differentiable ops, so a second derivative can flow
// through them (DoubleBackward::supported).
#include "03_matmul_backward/exercise.hpp"

namespace learn {

using tapegrad::Tensor;
using tapegrad::TensorList;

Tensor matmul_op(const Tensor& a, const Tensor& b) {
  Tensor c = product_unrecorded("matmul_op", a, b, 2);  // the forward, given
  if (!tapegrad::should_record({a, b})) return c;
  tapegrad::record(c, "matmul_op", {a, b}, [a, b](const Tensor& dc) -> TensorList {
    return {tapegrad::matmul(dc, tapegrad::transpose(b, 0, 1)),   // dA = dC·Bᵀ   (m,n)(n,k)
            tapegrad::matmul(tapegrad::transpose(a, 0, 1), dc)};  // dB = Aᵀ·dC   (k,m)(m,n)
  }, tapegrad::DoubleBackward::supported, tapegrad::Saves::inputs);
  return c;
}

Tensor batched_matmul_op(const Tensor& a, const Tensor& b) {
  Tensor c = product_unrecorded("batched_matmul_op", a, b, 3);  // the forward, given: B serves every A[i]
  if (!tapegrad::should_record({a, b})) return c;
  tapegrad::record(c, "batched_matmul_op", {a, b}, [a, b](const Tensor& dc) -> TensorList {
    const std::int64_t rows = a.shape()[0] * a.shape()[1], k = a.shape()[2], n = b.shape()[1];
    // dA[i] = dC[i]·Bᵀ for each i: matmul broadcasts the one Bᵀ over the batch
    const Tensor da = tapegrad::matmul(dc, tapegrad::transpose(b, 0, 1));
    // dB = Σ_i A[i]ᵀ·dC[i]: the batch's rows stacked, (k, batch·m)·(batch·m, n)
    const Tensor db = tapegrad::matmul(tapegrad::transpose(tapegrad::reshape(a, {rows, k}), 0, 1),
                                       tapegrad::reshape(dc, {rows, n}));
    return {da, db};
  }, tapegrad::DoubleBackward::supported, tapegrad::Saves::inputs);
  return c;
}

}  // namespace learn
