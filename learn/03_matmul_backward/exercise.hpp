// exercise.hpp — exercise 3's two ops: a matrix product that records its own node on
// tapegrad's tape, and its batched form. The student writes their backward in exercise.cpp.
#pragma once

#include <string>

#include <tapegrad/tapegrad.hpp>

namespace learn {

// C = A·B for A (m, k) and B (k, n): C (m, n). Its backward: dA = dC·Bᵀ, dB = Aᵀ·dC.
tapegrad::Tensor matmul_op(const tapegrad::Tensor& a, const tapegrad::Tensor& b);

// C[i] = A[i]·B for A (batch, m, k) and one B (k, n) shared by every batch element: C (batch, m, n).
// Its backward: dA[i] = dC[i]·Bᵀ, and dB = Σ_i A[i]ᵀ·dC[i], summed over the batch.
tapegrad::Tensor batched_matmul_op(const tapegrad::Tensor& a, const tapegrad::Tensor& b);

// The forward both ops share (given): A·B by tapegrad's matmul with recording off, so that the
// op records only its own node; a ShapeError naming `op` when A is not (a_dims..., m, k) or B (k, n).
inline tapegrad::Tensor product_unrecorded(const char* op, const tapegrad::Tensor& a, const tapegrad::Tensor& b,
                                           std::int64_t a_dims) {
  if (a.dim() != a_dims || b.dim() != 2 || a.shape().back() != b.shape()[0])
    throw tapegrad::ShapeError(std::string(op) + ": A " + tapegrad::shape_str(a.shape()) + " and B " +
                               tapegrad::shape_str(b.shape()) + " are not " +
                               (a_dims == 2 ? "(m, k) and (k, n)" : "(batch, m, k) and (k, n)"));
  tapegrad::NoGradGuard no_grad;
  return tapegrad::matmul(a, b);
}

}  // namespace learn
