// gemm_or_zero.hpp — internal: blas::gemm for sizes BLAS rejects. With K = 0 the product is
// zero (an empty sum), so C becomes zeros, or stays as it is when accumulating; with M or N = 0
// there is nothing to write. The attention kernels' products go through it, as their sizes may
// be zero (no keys, say). Its own header so that small_gemm.hpp, a general helper, need not
// include the attention's.
#pragma once

#include <algorithm>
#include <cstdint>

#include "blas.hpp"

namespace tapegrad::detail {

// C[M,N] = alpha·op(A)·op(B) (+ C when accumulate), and zeros when K = 0 and not
// accumulating (BLAS rejects the empty sizes).
template <typename T>
void gemm_or_zero(bool trans_a, bool trans_b, std::int64_t M, std::int64_t N, std::int64_t K, T alpha,
                  const T* A, std::int64_t lda, const T* B, std::int64_t ldb, T* C, std::int64_t ldc,
                  bool accumulate = false) {
  if (M == 0 || N == 0) return;
  if (K == 0) {
    if (!accumulate)
      for (std::int64_t i = 0; i < M; ++i) std::fill(C + i * ldc, C + i * ldc + N, T(0));
    return;
  }
  blas::gemm<T>(trans_a, trans_b, M, N, K, alpha, A, lda, B, ldb, accumulate ? T(1) : T(0), C, ldc);
}

}  // namespace tapegrad::detail
