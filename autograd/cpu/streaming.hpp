// streaming.hpp — elementwise passes over arrays bigger than the cache, in blocks, each block
// asking for the memory of a later one before it is needed (software prefetch).
//
// Why: a pass over arrays that live in main memory waits on its loads unless something fetches
// them ahead. The CPU's own prefetcher is meant to, and mostly does, but not always: in M's
// training step GELU's backward pass (u read, dh read and written, 12.6 MB each) ran at about
// 9 GB/s, half of its samples on the load of u, which the forward wrote long before. Asking for
// each array 2048 elements (8 KiB of floats) ahead, 256 elements at a time, made that pass 2.5x
// faster (5.9 -> 2.3 ms a call; in G 1.55 -> 0.57 ms). The cross-entropy's backward, which
// reads G's 51 MB of logits for an exp each, went from 11-13 to 6 ms. It is no rule, though,
// and no theory predicted where it pays: the same blocks made no measurable difference to the
// residual add, GELU's forward pass and the cross-entropy's forward; prefetching rows ahead none
// to LayerNorm's backward; and the blocks made AdamW's update slower (bench_adamw, G: 123 -> 148
// ms), and SiLU's backward and the elementwise product in a SwiGLU model too (12.3 -> 15 ms and
// 23 -> 25 ms a step at M's size). So it is used where it was measured to pay, nowhere else
// (bench/README.md, "Software prefetch"). A prefetch is a hint: it changes no result.
//
//   for_each_block(n, [&](std::int64_t begin, std::int64_t end) {
//   #pragma omp simd
//     for (std::int64_t i = begin; i < end; ++i) y[i] = f(x[i]);
//   }, x, y);
//
// The blocks go to the threads in contiguous ranges (as `omp for schedule(static)`), one range
// per thread, so every element is computed by the same formula whatever the thread count: the
// bits do not depend on it.
#pragma once

#include <omp.h>

#include <algorithm>
#include <cstdint>

#include "parallel.hpp"

namespace tapegrad {

inline constexpr std::int64_t kStreamBlock = 256;    // elements per block: the simd loop's length
inline constexpr std::int64_t kPrefetchAhead = 2048;  // elements between a load and its prefetch

// Asks for the cache lines of p[from, to).
template <typename T>
inline void prefetch_elements(const T* p, std::int64_t from, std::int64_t to) {
  constexpr std::int64_t per_line = sizeof(T) >= 64 ? 1 : 64 / static_cast<std::int64_t>(sizeof(T));
  for (std::int64_t i = from; i < to; i += per_line) __builtin_prefetch(p + i);
}

// Asks for rows [r0, r1) of a matrix whose rows lie `ld` elements apart, `cols` elements of each.
// For rows far apart (a head's rows in M's packed qkv lie 4.6 KB apart, each on another page):
// the CPU's prefetcher follows a stream within a page, and does not fetch them. Used a block of
// rows ahead by copy_rows (small_gemm.hpp), transpose_into (transpose.hpp) and the
// materialized attention's prefetch_next_block (attention_materialized.cpp).
template <typename T>
inline void prefetch_rows(const T* m, std::int64_t ld, std::int64_t r0, std::int64_t r1, std::int64_t cols) {
  for (std::int64_t r = r0; r < r1; ++r) prefetch_elements(m + r * ld, 0, cols);
}

// body(b, e) for consecutive blocks [b, e) covering [begin, end), on this thread; `streams`
// are the arrays the body reads or writes at [b, e) (elements, whatever their type), prefetched
// kPrefetchAhead elements ahead, never past `end`.
template <typename Body, typename... T>
void blocks_of(std::int64_t begin, std::int64_t end, Body&& body, const T*... streams) {
  for (std::int64_t b = begin; b < end; b += kStreamBlock) {
    const std::int64_t e = std::min(end, b + kStreamBlock);
    (prefetch_elements(streams, std::min(end, b + kPrefetchAhead), std::min(end, e + kPrefetchAhead)), ...);
    body(b, e);
  }
}

// blocks_of over [0, n), on all threads when n is worth a team.
template <typename Body, typename... T>
void for_each_block(std::int64_t n, Body&& body, const T*... streams) {
  parallel_region_if(n > kParallelGrain, [&] {
    // This thread's range, its start a multiple of 64 elements (whole vectors and cache lines).
    const std::int64_t threads = omp_get_num_threads(), t = omp_get_thread_num();
    const std::int64_t begin = t == 0 ? 0 : n * t / threads / 64 * 64;
    const std::int64_t end = t + 1 == threads ? n : n * (t + 1) / threads / 64 * 64;
    blocks_of(begin, end, body, streams...);
  });
}

}  // namespace tapegrad
