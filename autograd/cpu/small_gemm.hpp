// small_gemm.hpp — internal: products small enough for OpenBLAS's "small matrix" kernels, and
// the copies that put their operands in the layout those kernels read fast.
//
// Why: OpenBLAS (since 0.3.17, SkylakeX kernels) runs a product of at most 100³ multiply-adds
// on kernels that read A and B in place, where larger ones first pack both into buffers. At
// the shapes of one attention block (64 query rows, D = 64, up to 256 keys) the small kernels
// are the fast ones. Measured here, float32, 1 thread, µs per call (row-major terms):
//   S = q·kᵀ      NT 64×256×64 (packed path, as now)    21.9   (93–95 GFLOP/s at any N)
//                 NN 64×256×64 with kᵀ copied            19.1   (over 100³: packed)
//                 NN 64×128×64, twice                    14.6   (small kernel, 144 GFLOP/s)
//   out = P·v     NN 64×64×256, v rows 1152 apart        19.4
//                 NN 64×64×128 twice, v rows 1152 apart  20.5   (the small kernel reads B's
//                 NN 64×64×128 twice, v contiguous       13.8    rows in place: stride hurts)
// So a block's products go in chunks of at most 100³ multiply-adds, with B contiguous (and
// B = kᵀ stored transposed, for OpenBLAS turns every row-major NT product away from its
// small kernels; transpose.hpp). A head is transposed in about the time it takes to copy it.
// (OpenBLAS: kernel/x86_64/sgemm_small_kernel_permit_skylakex.c; other cores and other
// libraries see the same products, only in different chunks.)
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>

#include "gemm_or_zero.hpp"
#include "streaming.hpp"

namespace tapegrad::detail {

// OpenBLAS's limit for its small kernels, in multiply-adds M·N·K.
inline constexpr std::int64_t kSmallProductMadds = 100 * 100 * 100;

// How long each chunk of a dimension of length `len` is, when every chunk times `other` (the
// product of the two other dimensions) must stay within kSmallProductMadds: len split into
// equal parts, as few as will do (256 → 2 × 128 at 64 × 64, never 240 + 16).
inline std::int64_t small_chunk(std::int64_t len, std::int64_t other) {
  if (len <= 0 || other <= 0) return std::max<std::int64_t>(len, 1);
  const std::int64_t most = std::max<std::int64_t>(kSmallProductMadds / other, 1);
  const std::int64_t parts = (len + most - 1) / most;
  return (len + parts - 1) / parts;
}

// dst (rows, cols), contiguous = src (rows, cols) with leading dimension ld_src, asking for
// the rows 16 ahead as it goes (prefetch_rows: rows a page apart are not prefetched otherwise).
template <typename T>
void copy_rows(T* __restrict dst, const T* __restrict src, std::int64_t ld_src, std::int64_t rows, std::int64_t cols) {
  constexpr std::int64_t ahead = 16;
  for (std::int64_t r = 0; r < rows; ++r) {
    if (r % ahead == 0) prefetch_rows(src, ld_src, r + ahead, std::min(r + 2 * ahead, rows), cols);
    std::memcpy(dst + r * cols, src + r * ld_src, sizeof(T) * cols);
  }
}

// C (M, N) = alpha·A·B with A (M, K) and B (K, N), in chunks of N's columns: each chunk of C
// is its own product (the same sums, in the same order, as one product over all of N).
template <typename T>
void gemm_nn_by_columns(std::int64_t M, std::int64_t N, std::int64_t K, T alpha, const T* A, std::int64_t lda,
                        const T* B, std::int64_t ldb, T* C, std::int64_t ldc) {
  const std::int64_t chunk = small_chunk(N, M * K);
  for (std::int64_t n0 = 0; n0 < N; n0 += chunk)
    gemm_or_zero<T>(false, false, M, std::min(chunk, N - n0), K, alpha, A, lda, B + n0, ldb, C + n0, ldc);
}

// C (M, N) = alpha·op(A)·B (+ C when accumulate), op(A) = A (M, K) or Aᵀ with A (K, M) when
// trans_a, and B (K, N): the sum over K in chunks, each chunk's product added into C.
template <typename T>
void gemm_by_sum_chunks(bool trans_a, std::int64_t M, std::int64_t N, std::int64_t K, T alpha, const T* A,
                        std::int64_t lda, const T* B, std::int64_t ldb, T* C, std::int64_t ldc, bool accumulate) {
  if (K == 0) return gemm_or_zero<T>(trans_a, false, M, N, K, alpha, A, lda, B, ldb, C, ldc, accumulate);
  const std::int64_t chunk = small_chunk(K, M * N);
  for (std::int64_t k0 = 0; k0 < K; k0 += chunk) {
    const T* A_chunk = trans_a ? A + k0 * lda : A + k0;  // op(A)'s columns k0..
    gemm_or_zero<T>(trans_a, false, M, N, std::min(chunk, K - k0), alpha, A_chunk, lda, B + k0 * ldb, ldb, C, ldc,
                    accumulate || k0 > 0);
  }
}

// C (M, N) = alpha·op(A)·B (+ C when accumulate), as above, in chunks of C's rows: each
// chunk of rows its own product (the same sums, in the same order).
template <typename T>
void gemm_by_row_chunks(bool trans_a, std::int64_t M, std::int64_t N, std::int64_t K, T alpha, const T* A,
                        std::int64_t lda, const T* B, std::int64_t ldb, T* C, std::int64_t ldc, bool accumulate) {
  const std::int64_t chunk = small_chunk(M, N * K);
  for (std::int64_t m0 = 0; m0 < M; m0 += chunk) {
    const T* A_chunk = trans_a ? A + m0 : A + m0 * lda;  // op(A)'s rows m0..
    gemm_or_zero<T>(trans_a, false, std::min(chunk, M - m0), N, K, alpha, A_chunk, lda, B, ldb, C + m0 * ldc, ldc,
                    accumulate);
  }
}

}  // namespace tapegrad::detail
