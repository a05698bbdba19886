// transpose.hpp — internal: a matrix copied transposed, for the attention's staged kᵀ and vᵀ
// (attention_staging.hpp).
//
// In 16×16 tiles: a tile's reads and writes stay within 16 cache lines each, where a plain
// double loop strides one of them across the whole matrix (8x slower). A float tile is
// transposed in registers: 16 rows loaded as vectors, then four rounds of shuffles, then 16
// columns stored as vectors. Round s (s = 8, 4, 2, 1) pairs row i with row i + s (i's bit s
// clear) and swaps the s×s off-diagonal blocks between them: element (r, c) moves to
// (r + s, c − s) when r's bit s is 0 and c's is 1, and the other way round. Each round thus
// swaps one bit of the row index with the same bit of the column index; after all four,
// (r, c) is at (c, r). (The 2-source shuffles are one vpermt2ps each with AVX-512.)
// Measured with the step's strides, µs a head, best of 7 (scalar 16×16 tiles → registers):
// S's 64×32 0.32 → 0.10 in the cache, 0.65 → 0.36 from memory; M's 256×64 3.3 → 3.5 in the
// cache (the copy's memory speed either way), 6.3 → 3.8 from memory.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <type_traits>
#include <utility>

#include "streaming.hpp"

namespace tapegrad::detail {

namespace transpose_tile {

constexpr int kTile = 16;
using Row = float __attribute__((vector_size(kTile * sizeof(float))));  // 16 floats: a GCC/Clang vector

// Round s: row i keeps its elements whose column has bit s clear and takes row i + s's from s
// columns to the left; row i + s the mirror. The index lists run over the 32 elements of
// (row i, row i + s). (Rows by pointer, not by value: a vector argument's ABI would depend on
// the compiler flags of whoever includes this.)
template <int s, std::size_t... k>
inline void swap_bit(Row* m, std::index_sequence<k...>) {
  for (int i = 0; i < kTile; ++i)
    if (!(i & s)) {
      const Row a = m[i], b = m[i + s];
      m[i] = __builtin_shufflevector(a, b, ((k & s) ? kTile + k - s : k)...);
      m[i + s] = __builtin_shufflevector(a, b, ((k & s) ? kTile + k : k + s)...);
    }
}

// dst (16, 16) with leading dimension ld_dst = src (16, 16)ᵀ.
inline void in_registers(float* __restrict dst, std::int64_t ld_dst, const float* __restrict src,
                         std::int64_t ld_src) {
  Row m[kTile];
  for (int r = 0; r < kTile; ++r) std::memcpy(&m[r], src + r * ld_src, sizeof(Row));
  constexpr auto columns = std::make_index_sequence<kTile>{};
  swap_bit<8>(m, columns);
  swap_bit<4>(m, columns);
  swap_bit<2>(m, columns);
  swap_bit<1>(m, columns);
  for (int c = 0; c < kTile; ++c) std::memcpy(dst + c * ld_dst, &m[c], sizeof(Row));
}

}  // namespace transpose_tile

// dst (cols, rows) with leading dimension ld_dst = src (rows, cols)ᵀ, src with leading
// dimension ld_src. Each band of 16 rows asks for the next band's rows first (prefetch_rows:
// a head's rows lie a page or more apart, and the transposes waited on them).
template <typename T>
void transpose_into(T* __restrict dst, std::int64_t ld_dst, const T* __restrict src, std::int64_t ld_src,
                    std::int64_t rows, std::int64_t cols) {
  constexpr std::int64_t tile = transpose_tile::kTile;
  for (std::int64_t r0 = 0; r0 < rows; r0 += tile) {
    prefetch_rows(src, ld_src, r0 + tile, std::min(r0 + 2 * tile, rows), cols);
    for (std::int64_t c0 = 0; c0 < cols; c0 += tile) {
      const std::int64_t r1 = std::min(r0 + tile, rows), c1 = std::min(c0 + tile, cols);
      if constexpr (std::is_same_v<T, float>)
        if (r1 - r0 == tile && c1 - c0 == tile) {
          transpose_tile::in_registers(dst + c0 * ld_dst + r0, ld_dst, src + r0 * ld_src + c0, ld_src);
          continue;
        }
      for (std::int64_t c = c0; c < c1; ++c)  // a partial tile, or double
        for (std::int64_t r = r0; r < r1; ++r) dst[c * ld_dst + r] = src[r * ld_src + c];
    }
  }
}

}  // namespace tapegrad::detail
