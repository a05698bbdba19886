// attention_staging.hpp — internal: a head's q, k, v or dO as the attention kernels' products
// read it, staged (copied once per pair into the thread's scratch, in the layout OpenBLAS's
// small-matrix kernels read fast, small_gemm.hpp) or in place. Shared by the materialized and
// the flash kernels.
//   rows_of        (T, D) rows, contiguous: B of P·v, dS·k, Pᵀ·dO, dSᵀ·q
//   transposed_of  (D, T) columns, for S = q·kᵀ and dP = dO·vᵀ as NN products
#pragma once

#include <cstdint>

#include "small_gemm.hpp"
#include "transpose.hpp"

namespace tapegrad::detail {

// Whether a kernel stages its operands: the copies cost O(T·D) per pair against the products'
// O(Tq·Tk·D), so they pay from a block of 64 queries on. With fewer queries (decoding: 1 query
// and the whole cache), k and v are read in place, each once, as the products need them.
inline constexpr std::int64_t kStageFromQueries = 64;
inline bool staged(const AttentionDims& d) { return d.Tq >= kStageFromQueries; }

// A (T, D) head matrix as the products read it: a contiguous copy, or in place.
template <typename T>
struct HeadRows {
  const T* p = nullptr;
  std::int64_t ld = 0;
  const T* row(std::int64_t i) const { return p + i * ld; }
};

template <typename T>
HeadRows<T> rows_of(T* scratch, const T* m, std::int64_t ld, std::int64_t rows, std::int64_t cols, bool stage) {
  if (!stage) return {m, ld};
  copy_rows(scratch, m, ld, rows, cols);
  return {scratch, cols};
}

// A (T, D) head matrix that the products multiply by its transpose (k in S = q·kᵀ, v in
// dP = dO·vᵀ). Staged, it is stored transposed in tiles of `tile` rows: tile t is a (D, tile)
// block with leading dimension `tile`, so a tile's columns stay near each other however long
// T is (one tile of all T rows for the materialized kernel, key tiles of Bk for flash). In
// place, it is m itself, read by NT products.
template <typename T>
struct HeadTransposed {
  const T* p = nullptr;
  std::int64_t ld = 0, tile = 0, cols = 0;
  bool staged = false;
  // Row j0 on (the first of the tile's columns when staged; j0 is where a tile starts or
  // inside it, and the product's columns stay in that tile).
  const T* from(std::int64_t j0) const {
    if (!staged) return p + j0 * ld;
    return tile == 0 ? p : p + (j0 / tile) * tile * cols + j0 % tile;  // tile 0: no keys
  }
};

// The scratch transposed_of needs for a (rows, cols) matrix in tiles of `tile` rows: whole
// tiles, the last one as long as the others.
inline std::int64_t transposed_size(std::int64_t rows, std::int64_t cols, std::int64_t tile) {
  return tile > 0 ? (rows + tile - 1) / tile * tile * cols : 0;
}

template <typename T>
HeadTransposed<T> transposed_of(T* scratch, const T* m, std::int64_t ld, std::int64_t rows, std::int64_t cols,
                                std::int64_t tile, bool stage) {
  if (!stage) return {m, ld, 0, cols, false};
  for (std::int64_t j0 = 0; j0 < rows; j0 += tile)
    transpose_into(scratch + j0 * cols, tile, m + j0 * ld, ld, std::min(tile, rows - j0), cols);
  return {scratch, tile, tile, cols, true};
}

// C (M, N) = alpha·a·mᵀ with mᵀ's columns [j0, j0 + N): chunked NN products on the staged
// transpose, or one NT product on m in place.
template <typename T>
void gemm_by_transposed(std::int64_t M, std::int64_t N, std::int64_t K, T alpha, const T* a, std::int64_t lda,
                        const HeadTransposed<T>& m, std::int64_t j0, T* C, std::int64_t ldc) {
  if (m.staged) return gemm_nn_by_columns<T>(M, N, K, alpha, a, lda, m.from(j0), m.ld, C, ldc);
  gemm_or_zero<T>(false, true, M, N, K, alpha, a, lda, m.from(j0), m.ld, C, ldc);
}

}  // namespace tapegrad::detail
