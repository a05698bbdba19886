// linear_forward.hpp — the forward kernel of linear(), shared with the fused feed-forward
// (gelu_mlp.cpp) so that both give the same bits.
//
//   out (N, F) = a (N, K) · Wᵀ + bias,   W (F, K), all row-major
// Every row starts from the bias and gemm adds a·Wᵀ to it (beta = 1): PyTorch's addmm order.
#pragma once

#include <algorithm>
#include <cstdint>

#include "../blas.hpp"

namespace tapegrad {

// bias may be nullptr (no bias). With K = 0 the product is zero: out is the bias, or zeros.
template <typename T>
void linear_forward(T* out, const T* a, const T* w, const T* bias, std::int64_t N, std::int64_t K, std::int64_t F) {
  T beta = T(0);
  if (bias) {
    for (std::int64_t r = 0; r < N; ++r) std::copy(bias, bias + F, out + r * F);
    beta = T(1);
  }
  if (K > 0 && N > 0) blas::gemm<T>(false, true, N, F, K, T(1), a, K, w, K, beta, out, F);
  else if (!bias) std::fill(out, out + N * F, T(0));
}

}  // namespace tapegrad
