// attention_staging.hpp — internal: a head's q, k, v or dO as the attention kernels' products
// read it, staged (copied once per pair into the thread's scratch, in the layout OpenBLAS's
// small-matrix kernels read fast, small_gemm.hpp) or in place. Shared by the materialized and
// the flash kernels.
//   rows_of        (T, D) rows, contiguous: B of P·v, dS·k, Pᵀ·dO, dSᵀ·q
//   transposed_of  (D, T) columns, for S = q·kᵀ and dP = dO·vᵀ as NN products
#pragma once

#include <cstdint>

#include "attention_kernels.hpp"
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
// block with leading dimension staged_ld(tile), so a tile's columns stay near each other
// however long T is (one tile of all T rows for the materialized kernel, key tiles of Bk for
// flash). In place, it is m itself, read by NT products.
//
// Why staged_ld and not `tile`: the products read this block as B, a row of D at a time, and
// rows 256 floats apart (1 KB: T = 256 for the materialized kernel, Bk = 256 for flash) all
// fall into the same few sets of the L1 cache, which then holds only a fraction of the block.
// One cache line more per row spreads them over every set. Measured (float32, 1 thread, the
// small kernel NN 64×128×64 of S = q·kᵀ, q's rows 1152 floats apart as in M's packed qkv, a
// scratch program): 151–155 GFLOP/s with B's rows 256 floats apart, 204–206 with 272, 206–212
// with B contiguous, as the GEMM floor times it. In M's step the same products ran at 145–165
// against 208–220 alone (train_step --floor); with the extra line, NN 64×128×64 176 → 197 and
// 64×192×64 152 → 201 in the step, M's attention 4 ms a step faster on 1 thread, L's step
// (flash, Bk = 256) 4–5%. The arithmetic is the same: so are the bits. The cost: at L the
// staged tiles outgrow 512 KB, and ThreadScratch rounds them up to 1 MB (peak RSS 377 → 381 MiB).
template <typename T>
constexpr std::int64_t staged_ld(std::int64_t tile) {
  constexpr std::int64_t line = 64 / static_cast<std::int64_t>(sizeof(T));  // elements per cache line
  return (tile + line - 1) / line * line + line;
}

template <typename T>
struct HeadTransposed {
  const T* p = nullptr;
  std::int64_t ld = 0, tile = 0, cols = 0;
  bool staged = false;
  // Row j0 on (the first of the tile's columns when staged; j0 is where a tile starts or
  // inside it, and the product's columns stay in that tile).
  const T* from(std::int64_t j0) const {
    if (!staged) return p + j0 * ld;
    return tile == 0 ? p : p + (j0 / tile) * ld * cols + j0 % tile;  // tile 0: no keys
  }
};

// The scratch transposed_of needs for a (rows, cols) matrix in tiles of `tile` rows: whole
// tiles, the last one as long as the others, each (cols, staged_ld(tile)).
template <typename T>
std::int64_t transposed_size(std::int64_t rows, std::int64_t cols, std::int64_t tile) {
  return tile > 0 ? (rows + tile - 1) / tile * staged_ld<T>(tile) * cols : 0;
}

template <typename T>
HeadTransposed<T> transposed_of(T* scratch, const T* m, std::int64_t ld, std::int64_t rows, std::int64_t cols,
                                std::int64_t tile, bool stage) {
  if (!stage) return {m, ld, 0, cols, false};
  const std::int64_t ld_tile = staged_ld<T>(tile);
  for (std::int64_t j0 = 0; j0 < rows; j0 += tile)
    transpose_into(scratch + j0 / tile * ld_tile * cols, ld_tile, m + j0 * ld, ld, std::min(tile, rows - j0), cols);
  return {scratch, ld_tile, tile, cols, true};
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
