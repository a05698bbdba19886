// attention_flash.cpp — scaled dot-product attention, tiled with an online softmax: the op of
// ops/attention.cpp in O(Bq·Bk + T·D) scratch per thread instead of a Tq·Tk score matrix per pair.
//   FlashAttention: Dao et al. 2022, arXiv 2205.14135 (forward, online softmax, recompute).
//   FlashAttention-2: Dao 2023, arXiv 2307.08691 (backward with Δ = rowsum(dO ⊙ O)).
// A CPU kernel: the tiles are sized for the caches and every product is blas::gemm, from 64
// queries on in chunks on staged copies of q, k, v and dO (attention_staging.hpp; at T 2048,
// D 64, 1 thread: 44 -> 32 ms causal, 79 -> 57 ms not causal, bench_attention). Not here:
// dropout (the materialized kernels draw its row-major mask; AttentionKernel says which kernel
// runs) and double backward (the glue's composite form).
#include <algorithm>
#include <cmath>
#include <vector>

#include "attention_kernels.hpp"
#include "attention_staging.hpp"
#include "parallel.hpp"
#include "vec_math.hpp"

namespace tapegrad::detail {

namespace {

// Tile sizes. With D = Dv = 64 in float32, a q block (Bq·D), a k and a v tile (Bk·D each) and
// the score tile (Bq·Bk) take 16 + 64 + 64 + 64 KB = 208 KB at Bq = 64, Bk = 256 (the
// backward adds a dS tile and the dK, dV rows of the key tile: 336 KB): they stay in L2 (1 MB
// per core on this machine, an AVX-512 AMD EPYC with 2 cores) while a tile's gemms read them.
// OpenBLAS runs gemms with a side below ~128 at ~88 GFLOP/s against ~150 for large ones, so
// the tiles are as large as the cache allows (each gemm has D = 64 as one side anyway).
// Measured (forward + backward of scaled_dot_product_attention, B = 1, H = 2, D = 64, float32,
// causal, 1 thread; ms per pair at T = 512 / 1024 / 2048, best of 10-60 runs; load average
// 2-3 on the 2 cores from other work, so ±10%; bench/bench_attention times the same op):
//   Bq  64, Bk 128: 2.05 / 7.41 / 25.1      Bq 128, Bk 256: 1.94 / 6.66 / 25.1
//   Bq  64, Bk 256: 1.90 / 6.78 / 24.7      Bq 128, Bk 512: 2.45 / 8.10 / 28.4
//   Bq  64, Bk 512: 2.68 / 11.7 / 29.2      Bq  32, Bk 256: 2.02 / 8.28 / 30.8
//   materialized:   2.16 / 11.5 / 41.2
// Where automatic starts using these kernels (kFlashAttentionMinScores, ops.hpp): with Bq = 64,
// Bk = 256, flash time / materialized time at T = 128 / 256 / 384 / 512 / 1024 / 2048:
//   causal      1.13 / 1.09 / 0.92 / 0.89 / 0.76 / 0.63   (2048: 23.8 against 37.9 ms)
//   not causal  1.04 / 0.91 / 0.89 / 0.87 / 0.86 / 0.79
//   causal, 2 threads, H = 4:  T = 512 / 1024 / 2048: 0.91 / 0.77 / 0.66
//   bench_attention at load 0.5, ms for both pairs, causal T = 256 / 384 / 2048:
//   1.23 / 2.31 / 50.9 flash against 1.23 / 2.57 / 82.0 materialized
// so from Tq·Tk = 384·384 on: the materialized scores of one pair (576 KB in float32, and dP
// beside them in the backward) no longer fit in L2.
constexpr std::int64_t kFlashBlockQ = 64;   // query rows per block
constexpr std::int64_t kFlashBlockK = 256;  // keys per tile

FlashTiles g_tiles{kFlashBlockQ, kFlashBlockK};

// How many keys of the tile [j0, j0 + cols) query i sees: the causal mask hides keys
// j >= visible_end(i), so loops stop there and the rest of the tile row is zero. Tiles
// entirely past the diagonal are never formed; only those that cross it have such a tail.
std::int64_t tile_end(std::int64_t i, std::int64_t j0, std::int64_t cols, const AttentionDims& d,
                      const AttentionConfig& cfg) {
  return std::clamp(visible_end(i, d, cfg) - j0, std::int64_t(0), cols);
}

// -inf on the padded keys of the score tile S (rows, cols), keys j0.. of batch b.
template <typename T>
void mask_padded_keys(T* S, std::int64_t ld, std::int64_t rows, std::int64_t j0, std::int64_t cols, std::int64_t b,
                      const AttentionDims& d, const AttentionConfig& cfg) {
  if (!cfg.key_padding) return;
  const unsigned char* pad = cfg.key_padding + b * d.Tk + j0;
  for (std::int64_t r = 0; r < rows; ++r)
    for (std::int64_t c = 0; c < cols; ++c)
      if (pad[c]) S[r * ld + c] = -INFINITY;
}

// Zeros rows [0, n) × [0, width) of a matrix with leading dimension ld.
template <typename T>
void zero_rows(T* p, std::int64_t n, std::int64_t width, std::int64_t ld) {
  for (std::int64_t r = 0; r < n; ++r) std::fill(p + r * ld, p + r * ld + width, T(0));
}

}  // namespace

FlashTiles flash_tiles() { return g_tiles; }

FlashTiles set_flash_tiles_for_testing(FlashTiles tiles) {
  const FlashTiles previous = g_tiles;
  g_tiles = tiles.Bq > 0 && tiles.Bk > 0 ? tiles : FlashTiles{kFlashBlockQ, kFlashBlockK};
  return previous;
}

// ---- forward. Per (pair, block of Bq query rows), over key tiles of Bk keys, keeping a
// running row max m and a running row sum l of exp(S − m):
//   S = q_blk·k_tileᵀ·scale (padded keys -inf)     m' = max(m, rowmax S)    P = exp(S − m')
//   l ← l·exp(m − m') + rowsum P                   O ← O·exp(m − m') + P·v_tile
// and at the end O /= l, lse = m + log l: the softmax of the whole row, tile by tile. A row
// with every key masked keeps m = -inf and l = 0: its output is 0 and its lse -inf.
// Work items are (pair, query block): each writes its own output rows and lse entries, so
// the result does not depend on the thread count.
template <typename T>
void flash_attention_forward(T* out, const HeadLayout& lout, T* lse, const T* q, const HeadLayout& lq, const T* k,
                             const HeadLayout& lk, const T* v, const HeadLayout& lv, const AttentionDims& d,
                             const AttentionConfig& cfg) {
  const FlashTiles t = g_tiles;
  const std::int64_t blocks = (d.Tq + t.Bq - 1) / t.Bq, tasks = d.pairs() * blocks;
  const bool parallel = tasks > 1 && d.pairs() * d.Tq * d.Tk * (d.D + d.Dv) > kParallelGrain;
  const T scale = static_cast<T>(cfg.scale);
  // kᵀ in key tiles and v, staged once per kv head and thread (attention_staging.hpp)
  const bool stage = staged(d);
  ThreadScratch<T> keys_t(stage ? transposed_size<T>(d.Tk, d.D, t.Bk) : 0), values(stage ? d.Tk * d.Dv : 0);
  // Inside this region OpenBLAS runs each gemm on the calling thread.
  parallel_region_if(parallel, [&] {
    // Scratch allocated once per thread: the score tile (probabilities in place), m and l.
    std::vector<T> S(t.Bq * t.Bk), m(t.Bq);
    std::vector<double> l(t.Bq);  // in double, as the materialized kernel's row sums
    std::int64_t staged_kv = -1;  // the kv head staged last by this thread
    HeadTransposed<T> kt;
    HeadRows<T> vr;
    // Round robin: under a causal mask the later query blocks have more keys to visit.
#pragma omp for schedule(static, 1)
    for (std::int64_t task = 0; task < tasks; ++task) {
      const std::int64_t pair = task / blocks, b = pair / d.H, h = pair % d.H, kv = b * d.Hkv + h / d.group();
      const std::int64_t i0 = (task % blocks) * t.Bq, rows = std::min(t.Bq, d.Tq - i0);
      const T* qb = q + lq.offset(b, h) + i0 * lq.ld;
      if (kv != staged_kv) {
        kt = transposed_of(keys_t.mine(), k + lk.offset(b, h), lk.ld, d.Tk, d.D, t.Bk, stage);
        vr = rows_of(values.mine(), v + lv.offset(b, h), lv.ld, d.Tk, d.Dv, stage);
        staged_kv = kv;
      }
      T* O = out + lout.offset(b, h) + i0 * lout.ld;  // the output rows are the accumulator
      zero_rows(O, rows, d.Dv, lout.ld);
      std::fill(m.begin(), m.end(), T(-INFINITY));
      std::fill(l.begin(), l.end(), 0.0);
      // The block's last row sees the most keys; the tiles past them are skipped.
      const std::int64_t key_end = visible_end(i0 + rows - 1, d, cfg);
      for (std::int64_t j0 = 0; j0 < key_end; j0 += t.Bk) {
        const std::int64_t cols = std::min(t.Bk, key_end - j0);
        // S (rows, cols) = q_blk (rows, D) · k_tileᵀ (D, cols) · scale
        gemm_by_transposed<T>(rows, cols, d.D, scale, qb, lq.ld, kt, j0, S.data(), t.Bk);
        mask_padded_keys(S.data(), t.Bk, rows, j0, cols, b, d, cfg);
        for (std::int64_t r = 0; r < rows; ++r) {
          T* s = S.data() + r * t.Bk;
          const std::int64_t end = tile_end(i0 + r, j0, cols, d, cfg);
          T tile_max = -INFINITY;
          // As a comparison, not std::max: GCC vectorizes only this form of the max reduction.
#pragma omp simd reduction(max : tile_max)
          for (std::int64_t j = 0; j < end; ++j) tile_max = s[j] > tile_max ? s[j] : tile_max;
          const T m_new = std::max(m[r], tile_max);
          if (m_new == -INFINITY) {  // no visible key so far: P = 0, O and l stay 0
            std::fill(s, s + cols, T(0));
            continue;
          }
          double sum = 0;
#pragma omp simd reduction(+ : sum)
          for (std::int64_t j = 0; j < end; ++j) {
            s[j] = vec::exp(s[j] - m_new);  // padded: exp(-inf) = 0
            sum += s[j];
          }
          std::fill(s + end, s + cols, T(0));
          if (m_new != m[r]) {  // rescale what the earlier tiles summed: exp(m − m')
            const T alpha = vec::exp(m[r] - m_new);  // 0 when m = -inf (nothing summed yet)
            l[r] *= alpha;
            T* o = O + r * lout.ld;
#pragma omp simd
            for (std::int64_t c = 0; c < d.Dv; ++c) o[c] *= alpha;
          }
          l[r] += sum;
          m[r] = m_new;
        }
        // O (rows, Dv) += P (rows, cols) · v_tile (cols, Dv)
        gemm_by_sum_chunks<T>(false, rows, d.Dv, cols, T(1), S.data(), t.Bk, vr.row(j0), vr.ld, O, lout.ld, true);
      }
      for (std::int64_t r = 0; r < rows; ++r) {
        T& row_lse = lse[pair * d.Tq + i0 + r];
        if (l[r] == 0.0) {  // every key masked: O stayed 0
          row_lse = -INFINITY;
          continue;
        }
        const T inv_l = static_cast<T>(1.0 / l[r]);
        T* o = O + r * lout.ld;
        for (std::int64_t c = 0; c < d.Dv; ++c) o[c] *= inv_l;
        // Save one number per row: the backward recomputes P = exp(S − lse) tile by tile.
        row_lse = m[r] + static_cast<T>(std::log(l[r]));
      }
    }
  });
}

// ---- backward (FlashAttention-2). With P = exp(S − lse) recomputed per tile (save memory at
// the cost of compute) and Δ_i = rowsum(dO_i ⊙ O_i) = rowsum(dP_i ⊙ P_i) (as O_i = P_i·v):
//   dV_tile += Pᵀ·dO_blk    dP = dO_blk·v_tileᵀ    dS = P ⊙ (dP − Δ)
//   dQ_blk += dS·k_tile·scale    dK_tile += dSᵀ·q_blk·scale
// Δ replaces the materialized kernel's rowsum over a whole row of dP ⊙ P, which a tile does
// not see. Loop order: per kv pair on one thread (its G query heads in order, as the
// materialized kernel: dK and dV of a kv head are summed over its query heads in a fixed
// order, whatever the thread count), key tiles outer and query blocks inner (FA-2), so the
// dK and dV tiles stay in cache while every query block adds into them; dQ of the pair is
// only written by this thread. All five products are gemms of a Bq×Bk tile with D or Dv.
template <typename T>
void flash_attention_backward(T* dq, const HeadLayout& lgq, T* dk, const HeadLayout& lgk, T* dv,
                              const HeadLayout& lgv, const T* dout, const HeadLayout& lo, const T* out,
                              const HeadLayout& lout, const T* q, const HeadLayout& lq, const T* k,
                              const HeadLayout& lk, const T* v, const HeadLayout& lv, const T* lse,
                              const AttentionDims& d, const AttentionConfig& cfg) {
  const FlashTiles t = g_tiles;
  const bool need_ds = dq || dk;
  const bool parallel = d.pairs() > 1 && d.pairs() * d.Tq * d.Tk * (d.D + d.Dv) > kParallelGrain;
  const T scale = static_cast<T>(cfg.scale);
  // Δ (B, H, Tq): one number per query row, like lse (0 for a fully masked row: O = 0).
  std::vector<T> delta(need_ds ? d.pairs() * d.Tq : 0);
  if (need_ds) {
    parallel_region_if(parallel, [&] {
#pragma omp for schedule(static) nowait
      for (std::int64_t pair = 0; pair < d.pairs(); ++pair) {
        const std::int64_t b = pair / d.H, h = pair % d.H;
        for (std::int64_t i = 0; i < d.Tq; ++i) {
          const T* o = out + lout.offset(b, h) + i * lout.ld;
          const T* g = dout + lo.offset(b, h) + i * lo.ld;
          double dot = 0;
#pragma omp simd reduction(+ : dot)
          for (std::int64_t c = 0; c < d.Dv; ++c) dot += static_cast<double>(g[c]) * o[c];
          delta[pair * d.Tq + i] = static_cast<T>(dot);
        }
      }
    });
  }
  // The staged operands (attention_staging.hpp): kᵀ and vᵀ in key tiles and k once per kv
  // head, q and dO once per query head.
  const bool stage = staged(d);
  ThreadScratch<T> keys_t(stage ? transposed_size<T>(d.Tk, d.D, t.Bk) : 0),
      values_t(stage && need_ds ? transposed_size<T>(d.Tk, d.Dv, t.Bk) : 0),
      keys(stage && dq ? d.Tk * d.D : 0), queries(stage && dk ? d.Tq * d.D : 0),
      out_grads(stage && dv ? d.Tq * d.Dv : 0);
  parallel_region_if(parallel && d.kv_pairs() > 1, [&] {
    std::vector<T> P(t.Bq * t.Bk), dS(need_ds ? t.Bq * t.Bk : 0);  // per thread, reused by every tile
#pragma omp for schedule(static)
    for (std::int64_t kv_pair = 0; kv_pair < d.kv_pairs(); ++kv_pair) {
      const std::int64_t b = kv_pair / d.Hkv, h_first = (kv_pair % d.Hkv) * d.group();
      const T* kp = k + lk.offset(b, h_first);
      const HeadTransposed<T> kt = transposed_of(keys_t.mine(), kp, lk.ld, d.Tk, d.D, t.Bk, stage);
      const HeadTransposed<T> vt =
          need_ds ? transposed_of(values_t.mine(), v + lv.offset(b, h_first), lv.ld, d.Tk, d.Dv, t.Bk, stage)
                  : HeadTransposed<T>{};
      const HeadRows<T> kr = dq ? rows_of(keys.mine(), kp, lk.ld, d.Tk, d.D, stage) : HeadRows<T>{};
      // The gemms below all accumulate: start the gradients of this kv head from 0.
      if (dk) zero_rows(dk + lgk.offset(b, h_first), d.Tk, d.D, lgk.ld);
      if (dv) zero_rows(dv + lgv.offset(b, h_first), d.Tk, d.Dv, lgv.ld);
      for (std::int64_t g = 0; g < d.group(); ++g) {
        const std::int64_t h = h_first + g, pair = b * d.H + h;
        const T* qp = q + lq.offset(b, h);
        const T* dop = dout + lo.offset(b, h);
        const HeadRows<T> qr = dk ? rows_of(queries.mine(), qp, lq.ld, d.Tq, d.D, stage) : HeadRows<T>{};
        const HeadRows<T> dor = dv ? rows_of(out_grads.mine(), dop, lo.ld, d.Tq, d.Dv, stage) : HeadRows<T>{};
        T* dqp = dq ? dq + lgq.offset(b, h) : nullptr;
        T* dkp = dk ? dk + lgk.offset(b, h) : nullptr;
        T* dvp = dv ? dv + lgv.offset(b, h) : nullptr;
        if (dqp) zero_rows(dqp, d.Tq, d.D, lgq.ld);
        for (std::int64_t j0 = 0; j0 < d.Tk; j0 += t.Bk) {
          const std::int64_t cols = std::min(t.Bk, d.Tk - j0);
          // Queries before query_begin see none of these keys: their blocks are skipped.
          const std::int64_t query_begin = cfg.causal ? std::clamp(j0 - cfg.causal_offset, std::int64_t(0), d.Tq) : 0;
          for (std::int64_t i0 = query_begin; i0 < d.Tq; i0 += t.Bq) {
            const std::int64_t rows = std::min(t.Bq, d.Tq - i0);
            // P (rows, cols) = exp(q_blk·k_tileᵀ·scale − lse); 0 where masked, and on a fully
            // masked row (lse = -inf), which so gets no gradient.
            gemm_by_transposed<T>(rows, cols, d.D, scale, qp + i0 * lq.ld, lq.ld, kt, j0, P.data(), t.Bk);
            mask_padded_keys(P.data(), t.Bk, rows, j0, cols, b, d, cfg);
            for (std::int64_t r = 0; r < rows; ++r) {
              T* p = P.data() + r * t.Bk;
              const T row_lse = lse[pair * d.Tq + i0 + r];
              const std::int64_t end = row_lse == -INFINITY ? 0 : tile_end(i0 + r, j0, cols, d, cfg);
#pragma omp simd
              for (std::int64_t j = 0; j < end; ++j) p[j] = vec::exp(p[j] - row_lse);
              std::fill(p + end, p + cols, T(0));
            }
            const T* dob = dop + i0 * lo.ld;
            // dV_tile (cols, Dv) += Pᵀ (cols, rows) · dO_blk (rows, Dv)
            if (dvp)
              gemm_by_row_chunks<T>(true, cols, d.Dv, rows, T(1), P.data(), t.Bk, dor.row(i0), dor.ld,
                                    dvp + j0 * lgv.ld, lgv.ld, true);
            if (!need_ds) continue;
            // dP (rows, cols) = dO_blk (rows, Dv) · v_tileᵀ (Dv, cols)
            gemm_by_transposed<T>(rows, cols, d.Dv, T(1), dob, lo.ld, vt, j0, dS.data(), t.Bk);
            // dS = P ⊙ (dP − Δ), in place (0 wherever P is)
            for (std::int64_t r = 0; r < rows; ++r) {
              const T* p = P.data() + r * t.Bk;
              T* ds = dS.data() + r * t.Bk;
              const T row_delta = delta[pair * d.Tq + i0 + r];
#pragma omp simd
              for (std::int64_t j = 0; j < cols; ++j) ds[j] = p[j] * (ds[j] - row_delta);
            }
            // dQ_blk (rows, D) += dS (rows, cols) · k_tile (cols, D) · scale
            if (dqp)
              gemm_by_sum_chunks<T>(false, rows, d.D, cols, scale, dS.data(), t.Bk, kr.row(j0), kr.ld,
                                    dqp + i0 * lgq.ld, lgq.ld, true);
            // dK_tile (cols, D) += dSᵀ (cols, rows) · q_blk (rows, D) · scale
            if (dkp)
              gemm_by_row_chunks<T>(true, cols, d.D, rows, scale, dS.data(), t.Bk, qr.row(i0), qr.ld,
                                    dkp + j0 * lgk.ld, lgk.ld, true);
          }
        }
      }
    }
  });
}

#define TAPEGRAD_FLASH_INSTANTIATE(T)                                                                             \
  template void flash_attention_forward<T>(T*, const HeadLayout&, T*, const T*, const HeadLayout&, const T*,      \
                                           const HeadLayout&, const T*, const HeadLayout&, const AttentionDims&, \
                                           const AttentionConfig&);                                               \
  template void flash_attention_backward<T>(T*, const HeadLayout&, T*, const HeadLayout&, T*, const HeadLayout&, \
                                            const T*, const HeadLayout&, const T*, const HeadLayout&, const T*,  \
                                            const HeadLayout&, const T*, const HeadLayout&, const T*,            \
                                            const HeadLayout&, const T*, const AttentionDims&,                    \
                                            const AttentionConfig&);
TAPEGRAD_FLASH_INSTANTIATE(float)
TAPEGRAD_FLASH_INSTANTIATE(double)
#undef TAPEGRAD_FLASH_INSTANTIATE

}  // namespace tapegrad::detail
