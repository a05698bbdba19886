// attention_materialized.cpp — the materialized attention kernels: per (batch, head) pair,
// with q: (Tq, D), k: (Tk, D), v: (Tk, Dv):
//   S = q·kᵀ·scale (masked entries -inf)   P = softmax(S) row-wise   Pd = P ⊙ M   out = Pd·v
// where M is the dropout mask scaled by 1/(1-p) (all ones without dropout). Backward:
//   dV = Pdᵀ·dO   dPd = dO·vᵀ   dP = dPd ⊙ M   dS = P ⊙ (dP − rowsum(dP ⊙ P))
//   dQ = dS·k·scale   dK = dSᵀ·q·scale
// S of one pair lives in a Tq·Tk scratch, one pair per thread: simple, any option (dropout
// draws its mask row-major over it), fastest for short sequences. attention_flash.cpp tiles
// the same op in O(Bq·Bk); autograd/ops/attention.cpp is the glue and picks between them.
#include <algorithm>
#include <cmath>

#include "../generator.hpp"
#include "attention_kernels.hpp"
#include "attention_staging.hpp"
#include "parallel.hpp"
#include "vec_math.hpp"

namespace tapegrad::detail {

namespace {

// Queries are taken in blocks of kQueryBlock rows. With a causal mask, query i sees keys
// 0..i + o only (o = causal_offset), so the products skip the hidden upper triangle: block
// [i0, i1) multiplies with keys [0, i1 + o) alone (keys [j0, j1) with queries [j0 − o, Tq)
// alone, for the transposed products of the backward). At T = 256 and o = 0 that is 10 of 16
// blocks of the full product. Without a mask the blocks still give each product the shape of
// OpenBLAS's fast small kernels (small_gemm.hpp).
constexpr std::int64_t kQueryBlock = 64;

// A row's visible keys [0, end) rounded up to whole vectors of 16 floats (8 doubles), within
// the row's Tk. An elementwise loop over a row runs to this end instead of `end`: a causal row
// is 1 to Tk keys long, and GCC finishes a vectorized loop with a scalar one, so the rows'
// remainders (a vectorizable exp done one key at a time) took as long as their vector parts
// at T = 64. What the loop writes past `end` is overwritten with zeros right after. The row
// sums still run over [0, end) alone, in their own order (the bits stay the same); the max
// runs over the padding set to -inf, which changes no maximum.
template <typename T>
std::int64_t vector_end(std::int64_t end, std::int64_t Tk) {
  constexpr std::int64_t lanes = 64 / sizeof(T);
  return std::min((end + lanes - 1) / lanes * lanes, Tk);
}

// Calls f(i0, i1, key_end) for each block of query rows: key_end is how many keys (from 0)
// the block can see. Unstaged and without a causal mask, one block of every row and every key.
template <typename F>
void for_each_query_block(const AttentionDims& d, const AttentionConfig& cfg, F f) {
  if (!cfg.causal && !staged(d)) return f(std::int64_t(0), d.Tq, d.Tk);
  for (std::int64_t i0 = 0; i0 < d.Tq; i0 += kQueryBlock) {
    const std::int64_t i1 = std::min(i0 + kQueryBlock, d.Tq);
    f(i0, i1, cfg.causal ? std::min(i1 + cfg.causal_offset, d.Tk) : d.Tk);
  }
}

// Calls f(j0, j1, query_begin) for each block of key columns: query_begin is the first query
// that sees them (all queries without a causal mask).
template <typename F>
void for_each_key_block(const AttentionDims& d, const AttentionConfig& cfg, F f) {
  if (!cfg.causal && !staged(d)) return f(std::int64_t(0), d.Tk, std::int64_t(0));
  for (std::int64_t j0 = 0; j0 < d.Tk; j0 += kQueryBlock)
    f(j0, std::min(j0 + kQueryBlock, d.Tk),
      cfg.causal ? std::clamp(j0 - cfg.causal_offset, std::int64_t(0), d.Tq) : std::int64_t(0));
}

// q and dO are read in place by the products, a block of query rows at a time, and their rows
// lie far apart (a row of the packed qkv is 4.6 KB in M): the CPU's prefetcher, which follows a
// stream within a page, does not fetch them, and the small kernels waited on them (NN
// 64×128×64 at 163 GFLOP/s in M's step against 232 alone). So each block asks for the rows of
// the next one before its own product: they arrive while it runs. (The first block's rows are
// asked for when the pair starts.)
template <typename T>
void prefetch_next_block(const T* m, std::int64_t ld, std::int64_t next, std::int64_t cols, const AttentionDims& d) {
  if (staged(d)) prefetch_rows(m, ld, next, std::min(next + kQueryBlock, d.Tq), cols);
}

// S (Tq, Tk) = q (Tq, D) · kᵀ (D, Tk) · scale, then -inf where a padded key is hidden from
// query i. Keys past the causal end (visible_end) are left as they are, computed or not (the
// causal blocks skip most of them): the softmax reads row i up to visible_end alone and writes
// zeros after it.
template <typename T>
void attention_scores(T* S, const T* q, std::int64_t ldq, const HeadTransposed<T>& k, const AttentionDims& d,
                      const AttentionConfig& cfg, std::int64_t b) {
  for_each_query_block(d, cfg, [&](std::int64_t i0, std::int64_t i1, std::int64_t key_end) {
    prefetch_next_block(q, ldq, i1, d.D, d);
    gemm_by_transposed<T>(i1 - i0, key_end, d.D, static_cast<T>(cfg.scale), q + i0 * ldq, ldq, k, 0,
                          S + i0 * d.Tk, d.Tk);
  });
  const unsigned char* pad = cfg.key_padding ? cfg.key_padding + b * d.Tk : nullptr;
  if (!pad) return;
  for (std::int64_t i = 0; i < d.Tq; ++i) {
    T* row = S + i * d.Tk;
    const std::int64_t end = visible_end(i, d, cfg);
    for (std::int64_t j = 0; j < end; ++j)
      if (pad[j]) row[j] = -INFINITY;
  }
}

// P = softmax(S) over each row's visible keys, in place, and each row's log-sum-exp (lse: Tq
// numbers) for the backward, which recomputes P = exp(S − lse) from it (save memory at the cost
// of compute: one number per row, not Tk).
//
// The rows go through each step kSoftmaxRowGroup at a time: the maxima of a group, then its exps,
// its sums, its scaling. Why: a row's max and sum are reductions that end in a chain of
// dependent operations (the sum is in double, and GCC's reduction adds its 16 lanes one after
// another: 20-30 ns of a row's 70-100), and each step needs the one before; row by row, every
// step waited on the chain before it. Over a group the chains of its rows overlap. Each row
// computes exactly what it did row by row, in the same order: the same bits. One pair's softmax
// (causal, one thread), measured alone: T = 64 4.7 -> 2.7 µs, T = 256 29 -> 22 µs. (Groups of 8,
// 16 and 32 ran alike, of 4 slower; the max and exp in one step: 3.2 and 23.7 µs; the divisions
// and logs in a step of their own gained nothing.)
constexpr std::int64_t kSoftmaxRowGroup = 16;

template <typename T>
void softmax_rows(T* P, T* lse, const AttentionDims& d, const AttentionConfig& cfg) {
  for (std::int64_t i0 = 0; i0 < d.Tq; i0 += kSoftmaxRowGroup) {
    const std::int64_t i1 = std::min(i0 + kSoftmaxRowGroup, d.Tq);
    T row_max[kSoftmaxRowGroup];
    double row_sum[kSoftmaxRowGroup];
    for (std::int64_t i = i0; i < i1; ++i) {
      T* row = P + i * d.Tk;
      const std::int64_t end = visible_end(i, d, cfg), padded = vector_end<T>(end, d.Tk);
      // The keys past `end` up to `padded` as -inf: they change no maximum (a max does not
      // depend on the order either), and their exp below is 0.
      std::fill(row + end, row + padded, T(-INFINITY));
      T m = -INFINITY;
      // Written as a comparison, not std::max(m, x) (the same result): GCC vectorizes this form
      // of the max reduction and leaves the std::max form scalar.
#pragma omp simd reduction(max : m)
      for (std::int64_t j = 0; j < padded; ++j) m = row[j] > m ? row[j] : m;
      row_max[i - i0] = m;
    }
    for (std::int64_t i = i0; i < i1; ++i) {
      const T m = row_max[i - i0];
      if (m == -INFINITY) continue;  // every key masked: the last step writes P = 0
      T* row = P + i * d.Tk;
      const std::int64_t padded = vector_end<T>(visible_end(i, d, cfg), d.Tk);
#pragma omp simd
      for (std::int64_t j = 0; j < padded; ++j) row[j] = vec::exp(row[j] - m);  // masked: exp(-inf) = 0
    }
    for (std::int64_t i = i0; i < i1; ++i) {
      if (row_max[i - i0] == -INFINITY) continue;
      const T* row = P + i * d.Tk;
      const std::int64_t end = visible_end(i, d, cfg);
      double sum = 0;  // in double, as softmax.cpp, in a fixed vector order
#pragma omp simd reduction(+ : sum)
      for (std::int64_t j = 0; j < end; ++j) sum += row[j];
      row_sum[i - i0] = sum;
    }
    for (std::int64_t i = i0; i < i1; ++i) {
      T* row = P + i * d.Tk;
      if (row_max[i - i0] == -INFINITY) {  // every key masked: P = 0, so the output row is 0
        std::fill(row, row + d.Tk, T(0));
        lse[i] = -INFINITY;
        continue;
      }
      const std::int64_t end = visible_end(i, d, cfg), padded = vector_end<T>(end, d.Tk);
      const T inv_sum = static_cast<T>(1.0 / row_sum[i - i0]);
#pragma omp simd
      for (std::int64_t j = 0; j < padded; ++j) row[j] *= inv_sum;
      std::fill(row + end, row + d.Tk, T(0));
      lse[i] = row_max[i - i0] + static_cast<T>(std::log(row_sum[i - i0]));
    }
  }
}

}  // namespace

// keep[i] = 1 with probability 1 - p, drawn in row-major order from a generator seeded for
// this pair alone: the forward and the backward draw the same mask, on any thread.
void draw_keep(unsigned char* keep, std::int64_t n, double p, std::uint64_t seed) {
  Generator gen(seed);
  for (std::int64_t i = 0; i < n; ++i) keep[i] = gen.next_double() >= p;
}

// ---- kernels: lse (B, H, Tq) is contiguous; q, k, v, dout, out and the gradients are read
// and written through their HeadLayout.

template <typename T>
void attention_forward(T* out, const HeadLayout& lout, T* lse, const T* q, const HeadLayout& lq, const T* k,
                       const HeadLayout& lk, const T* v, const HeadLayout& lv, const AttentionDims& d,
                       const AttentionConfig& cfg) {
  const std::int64_t n = d.Tq * d.Tk;
  const bool parallel = d.pairs() > 1 && d.pairs() * n * (d.D + d.Dv) > kParallelGrain;
  const bool stage = staged(d);
  const T keep_scale = static_cast<T>(1.0 / (1.0 - cfg.dropout_p));
  ThreadScratch<T> scores(n);  // one pair's P per thread, reused for all its pairs
  ThreadScratch<T> keys_t(stage ? transposed_size<T>(d.Tk, d.D, d.Tk) : 0), values(stage ? d.Tk * d.Dv : 0);  // kᵀ and v, staged
  ThreadScratch<unsigned char> kept(cfg.seeds ? n : 0);
  // Inside this region OpenBLAS runs each gemm on the calling thread: one pair per thread.
  parallel_region_if(parallel, [&] {
    T* P = scores.mine();
    unsigned char* keep = kept.mine();
    // The kv head staged last: under GQA the G query heads of one kv head come one after
    // another (pair = b·H + h), so each kv head is staged once per thread that reads it.
    std::int64_t staged_kv = -1;
    HeadTransposed<T> kt{};
    HeadRows<T> vr{};
#pragma omp for schedule(static)
    for (std::int64_t pair = 0; pair < d.pairs(); ++pair) {
      const std::int64_t b = pair / d.H, h = pair % d.H, kv = b * d.Hkv + h / d.group();
      prefetch_next_block(q + lq.offset(b, h), lq.ld, 0, d.D, d);
      if (kv != staged_kv) {
        kt = transposed_of(keys_t.mine(), k + lk.offset(b, h), lk.ld, d.Tk, d.D, d.Tk, stage);
        vr = rows_of(values.mine(), v + lv.offset(b, h), lv.ld, d.Tk, d.Dv, stage);
        staged_kv = kv;
      }
      attention_scores(P, q + lq.offset(b, h), lq.ld, kt, d, cfg, b);
      softmax_rows(P, lse + pair * d.Tq, d, cfg);
      if (cfg.seeds) {  // Pd = P ⊙ M
        draw_keep(keep, n, cfg.dropout_p, cfg.seeds[pair]);
        for (std::int64_t i = 0; i < n; ++i) P[i] = keep[i] ? P[i] * keep_scale : T(0);
      }
      // out (Tq, Dv) = Pd (Tq, Tk) · v (Tk, Dv)
      for_each_query_block(d, cfg, [&](std::int64_t i0, std::int64_t i1, std::int64_t key_end) {
        gemm_by_sum_chunks<T>(false, i1 - i0, d.Dv, key_end, T(1), P + i0 * d.Tk, d.Tk, vr.p, vr.ld,
                              out + lout.offset(b, h) + i0 * lout.ld, lout.ld, false);
      });
    }
  });
}

// Gradient outputs first; dq, dk, dv may be nullptr when not needed (v is then only read when
// dq or dk is needed). dq, dk, dv are written through the layouts of q, k and v (lgq, lgk, lgv).
// Under GQA the G query heads of one kv head all add into its dK and dV: one thread takes the
// whole group, in order (the first head writes, the others accumulate), so no two threads
// write the same rows and the sum has a fixed order.
template <typename T>
void attention_backward(T* dq, const HeadLayout& lgq, T* dk, const HeadLayout& lgk, T* dv, const HeadLayout& lgv,
                        const T* dout, const HeadLayout& lo, const T* q,
                        const HeadLayout& lq, const T* k, const HeadLayout& lk, const T* v,
                        const HeadLayout& lv, const T* lse, const AttentionDims& d,
                        const AttentionConfig& cfg) {
  const std::int64_t n = d.Tq * d.Tk;
  const bool parallel = d.kv_pairs() > 1 && d.pairs() * n * (d.D + d.Dv) > kParallelGrain;
  const bool need_ds = dq || dk;
  const T keep_scale = static_cast<T>(1.0 / (1.0 - cfg.dropout_p));
  const T scale = static_cast<T>(cfg.scale);
  const bool stage = staged(d);
  ThreadScratch<T> scores(n), score_grads(need_ds ? n : 0), dropped(cfg.seeds && dv ? n : 0);
  // The staged operands (attention_staging.hpp): kᵀ for S, vᵀ for dPd, k for dQ, q for dK, dO for dV.
  ThreadScratch<T> keys_t(stage ? transposed_size<T>(d.Tk, d.D, d.Tk) : 0),
      values_t(stage && need_ds ? transposed_size<T>(d.Tk, d.Dv, d.Tk) : 0),
      keys(stage && dq ? d.Tk * d.D : 0), queries(stage && dk ? d.Tq * d.D : 0),
      out_grads(stage && dv ? d.Tq * d.Dv : 0);
  ThreadScratch<unsigned char> kept(cfg.seeds ? n : 0);
  parallel_region_if(parallel, [&] {
    T *P = scores.mine(), *dP = score_grads.mine(), *Pd = dropped.mine();
    unsigned char* keep = kept.mine();
#pragma omp for schedule(static)
    for (std::int64_t kv_pair = 0; kv_pair < d.kv_pairs(); ++kv_pair) {
      const std::int64_t kv_b = kv_pair / d.Hkv, kv_h = (kv_pair % d.Hkv) * d.group();  // its first query head
      const T* kp = k + lk.offset(kv_b, kv_h);
      const HeadTransposed<T> kt = transposed_of(keys_t.mine(), kp, lk.ld, d.Tk, d.D, d.Tk, stage);
      const HeadTransposed<T> vt = need_ds ? transposed_of(values_t.mine(), v + lv.offset(kv_b, kv_h), lv.ld, d.Tk,
                                                           d.Dv, d.Tk, stage)
                                           : HeadTransposed<T>{};
      const HeadRows<T> kr = dq ? rows_of(keys.mine(), kp, lk.ld, d.Tk, d.D, stage) : HeadRows<T>{};
      for (std::int64_t g = 0; g < d.group(); ++g) {
        const std::int64_t b = kv_b, h = kv_h + g, pair = b * d.H + h;
        const bool accumulate = g > 0;  // into the group's dK and dV
        const T* qp = q + lq.offset(b, h);
        const T* dop = dout + lo.offset(b, h);
        prefetch_next_block(qp, lq.ld, 0, d.D, d);
        prefetch_next_block(dop, lo.ld, 0, d.Dv, d);
        // Recompute P = exp(S − lse) (save memory at the cost of compute); a fully masked row
        // (lse = -inf) stays 0 and so gets no gradient.
        attention_scores(P, qp, lq.ld, kt, d, cfg, b);
        for (std::int64_t i = 0; i < d.Tq; ++i) {
          T* row = P + i * d.Tk;
          const T row_lse = lse[pair * d.Tq + i];
          const std::int64_t end = row_lse == -INFINITY ? 0 : visible_end(i, d, cfg);
          const std::int64_t padded = vector_end<T>(end, d.Tk);
#pragma omp simd
          for (std::int64_t j = 0; j < padded; ++j) row[j] = vec::exp(row[j] - row_lse);
          std::fill(row + end, row + d.Tk, T(0));
        }
        if (cfg.seeds) draw_keep(keep, n, cfg.dropout_p, cfg.seeds[pair]);
        if (dv) {
          const T* pd = P;
          if (cfg.seeds) {  // Pd = P ⊙ M
            for (std::int64_t i = 0; i < n; ++i) Pd[i] = keep[i] ? P[i] * keep_scale : T(0);
            pd = Pd;
          }
          // dV (Tk, Dv) = Pdᵀ (Tk, Tq) · dO (Tq, Dv)
          const HeadRows<T> dor = rows_of(out_grads.mine(), dop, lo.ld, d.Tq, d.Dv, stage);
          for_each_key_block(d, cfg, [&](std::int64_t j0, std::int64_t j1, std::int64_t query_begin) {
            gemm_by_sum_chunks<T>(true, j1 - j0, d.Dv, d.Tq - query_begin, T(1), pd + query_begin * d.Tk + j0, d.Tk,
                                  dor.p + query_begin * dor.ld, dor.ld, dv + lgv.offset(b, h) + j0 * lgv.ld, lgv.ld,
                                  accumulate);
          });
        }
        if (!need_ds) continue;
        // dPd (Tq, Tk) = dO (Tq, Dv) · vᵀ (Dv, Tk)
        for_each_query_block(d, cfg, [&](std::int64_t i0, std::int64_t i1, std::int64_t key_end) {
          prefetch_next_block(dop, lo.ld, i1, d.Dv, d);
          gemm_by_transposed<T>(i1 - i0, key_end, d.Dv, T(1), dop + i0 * lo.ld, lo.ld, vt, 0, dP + i0 * d.Tk, d.Tk);
        });
        if (cfg.seeds)  // dP = dPd ⊙ M
          for (std::int64_t i = 0; i < n; ++i) dP[i] = keep[i] ? dP[i] * keep_scale : T(0);
        // dS = P ⊙ (dP − rowsum(dP ⊙ P)): the softmax Jacobian-vector product, in place in dP.
        // The row sums of a group of rows first, then their rows of dS: the sums end in chains
        // of dependent additions, which overlap across a group (softmax_rows, above). Each row
        // computes what it did alone: the same bits.
        for (std::int64_t i0 = 0; i0 < d.Tq; i0 += kSoftmaxRowGroup) {
          const std::int64_t i1 = std::min(i0 + kSoftmaxRowGroup, d.Tq);
          T row_dot[kSoftmaxRowGroup];
          for (std::int64_t i = i0; i < i1; ++i) {
            const T* p_row = P + i * d.Tk;
            const T* dp_row = dP + i * d.Tk;
            const std::int64_t end = visible_end(i, d, cfg);  // P = 0 beyond: so is dS
            double dot = 0;
#pragma omp simd reduction(+ : dot)
            for (std::int64_t j = 0; j < end; ++j) dot += static_cast<double>(dp_row[j]) * p_row[j];
            row_dot[i - i0] = static_cast<T>(dot);
          }
          for (std::int64_t i = i0; i < i1; ++i) {
            const T* p_row = P + i * d.Tk;
            T* ds_row = dP + i * d.Tk;
            const T dot = row_dot[i - i0];
            const std::int64_t end = visible_end(i, d, cfg), padded = vector_end<T>(end, d.Tk);
#pragma omp simd
            for (std::int64_t j = 0; j < padded; ++j) ds_row[j] = p_row[j] * (ds_row[j] - dot);
            std::fill(ds_row + end, ds_row + d.Tk, T(0));
          }
        }
        // dQ (Tq, D) = dS (Tq, Tk) · k (Tk, D) · scale
        if (dq)
          for_each_query_block(d, cfg, [&](std::int64_t i0, std::int64_t i1, std::int64_t key_end) {
            gemm_by_sum_chunks<T>(false, i1 - i0, d.D, key_end, scale, dP + i0 * d.Tk, d.Tk, kr.p, kr.ld,
                                  dq + lgq.offset(b, h) + i0 * lgq.ld, lgq.ld, false);
          });
        // dK (Tk, D) = dSᵀ (Tk, Tq) · q (Tq, D) · scale
        if (dk) {
          const HeadRows<T> qr = rows_of(queries.mine(), qp, lq.ld, d.Tq, d.D, stage);
          for_each_key_block(d, cfg, [&](std::int64_t j0, std::int64_t j1, std::int64_t query_begin) {
            gemm_by_sum_chunks<T>(true, j1 - j0, d.D, d.Tq - query_begin, scale, dP + query_begin * d.Tk + j0, d.Tk,
                                  qr.p + query_begin * qr.ld, qr.ld, dk + lgk.offset(b, h) + j0 * lgk.ld, lgk.ld,
                                  accumulate);
          });
        }
      }
    }
  });
}

#define TAPEGRAD_ATTENTION_INSTANTIATE(T)                                                                        \
  template void attention_forward<T>(T*, const HeadLayout&, T*, const T*, const HeadLayout&, const T*,          \
                                     const HeadLayout&, const T*, const HeadLayout&, const AttentionDims&,       \
                                     const AttentionConfig&);                                                     \
  template void attention_backward<T>(T*, const HeadLayout&, T*, const HeadLayout&, T*, const HeadLayout&,      \
                                      const T*, const HeadLayout&, const T*, const HeadLayout&, const T*,       \
                                      const HeadLayout&, const T*, const HeadLayout&, const T*,                 \
                                      const AttentionDims&, const AttentionConfig&);
TAPEGRAD_ATTENTION_INSTANTIATE(float)
TAPEGRAD_ATTENTION_INSTANTIATE(double)
#undef TAPEGRAD_ATTENTION_INSTANTIATE

}  // namespace tapegrad::detail
