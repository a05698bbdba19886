// linear_kernels.hpp — the kernels of linear(), forward and backward, shared with the fused
// feed-forward (ops/gelu_mlp.cpp) so that both give the same bits. Raw pointers: the ops
// (ops/matmul.cpp, ops/gelu_mlp.cpp) check the shapes and call these.
//
//   forward:  out (N, F) = a (N, K) · Wᵀ + bias      W (F, K), all row-major
//   backward: da (N, K) = dout (N, F) · W             (linear_grad_input)
//             dW (F, K) = doutᵀ (F, N) · a (N, K)     (linear_grad_weight)
// Every forward row is the bias plus a·Wᵀ (blas::gemm_with_bias): PyTorch's addmm order. The
// gradient of the bias, Σ_rows dout, is sum() over dim 0 at the callers.
#pragma once

#include <algorithm>
#include <cstdint>

#include "blas.hpp"

namespace tapegrad {

// bias may be nullptr (no bias). With K = 0 the product is zero: out is the bias, or zeros.
template <typename T>
void linear_forward(T* out, const T* a, const T* w, const T* bias, std::int64_t N, std::int64_t K, std::int64_t F) {
  if (N == 0 || F == 0) return;
  if (K == 0) {  // no product: the bias in every row, or zeros
    for (std::int64_t r = 0; r < N; ++r) {
      if (bias) std::copy(bias, bias + F, out + r * F);
      else std::fill(out + r * F, out + (r + 1) * F, T(0));
    }
    return;
  }
  if (bias) blas::gemm_with_bias<T>(false, true, N, F, K, a, K, w, K, bias, out, F);
  else blas::gemm<T>(false, true, N, F, K, T(1), a, K, w, K, T(0), out, F);
}

// da = dout · W. Writes nothing when N, K or F is 0: the caller's buffer must then be zeros
// (Tensor::empty(..., zero = true)) where K > 0.
template <typename T>
void linear_grad_input(T* da, const T* dout, const T* w, std::int64_t N, std::int64_t K, std::int64_t F) {
  if (N > 0 && F > 0 && K > 0) blas::gemm<T>(false, false, N, K, F, T(1), dout, F, w, K, T(0), da, K);
}

// dW = doutᵀ · a. Writes nothing when N is 0 (the caller's buffer must then be zeros).
template <typename T>
void linear_grad_weight(T* dw, const T* dout, const T* a, std::int64_t N, std::int64_t K, std::int64_t F) {
  if (N > 0 && F > 0 && K > 0) blas::gemm<T>(true, false, F, K, N, T(1), dout, F, a, K, T(0), dw, K);
}

}  // namespace tapegrad
