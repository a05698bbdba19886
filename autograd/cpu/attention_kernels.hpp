// attention_kernels.hpp — internal: what the two attention kernel pairs share (dims, how a
// head's matrix is found in memory, the mask config), and the kernels themselves, on raw
// pointers: no Tensor here.
//   attention_materialized.cpp  the kernels with S of one pair in a Tq·Tk scratch
//   attention_flash.cpp         the tiled online-softmax kernels (O(Bq·Bk) scratch per thread)
// The op, its glue and the kernel choice are in autograd/ops/attention.cpp
// (attention_choice.hpp). Not a public header: nothing here is part of the API (ops.hpp is).
#pragma once

#include <algorithm>
#include <cstdint>

#include "blas.hpp"
#include "thread_scratch.hpp"

namespace tapegrad::detail {

// Hkv: the heads of k and v. Grouped-query attention (Ainslie et al. 2023, "GQA", arXiv
// 2305.13245) lets G = H / Hkv query heads share one key/value head: query head h reads kv
// head h / G (Hkv = H: multi-head attention; Hkv = 1: multi-query attention, Shazeer 2019).
struct AttentionDims {
  std::int64_t B = 0, H = 0, Tq = 0, Tk = 0, D = 0, Dv = 0, Hkv = 0;
  std::int64_t pairs() const { return B * H; }
  std::int64_t kv_pairs() const { return B * Hkv; }
  std::int64_t group() const { return H / Hkv; }  // G query heads per kv head
};

// Where the (Tq, D) matrix of pair (b, h) starts, and the distance between its rows (gemm's
// leading dimension). The last dim must be contiguous; the other strides are free, so the
// transposed view of a (B, T, H, D) tensor is read in place.
// group: query heads per stored head (G for k and v under GQA, 1 otherwise), so that query
// head h finds its k and v at stored head h / group: the kv heads are read where they are,
// never repeated in memory.
struct HeadLayout {
  std::int64_t batch_stride = 0, head_stride = 0, ld = 1, group = 1;
  std::int64_t offset(std::int64_t b, std::int64_t h) const { return b * batch_stride + (h / group) * head_stride; }
};

// What the mask and dropout need, as plain data the kernels can read from any thread.
struct AttentionConfig {
  bool causal = false;
  // With causal: query i sees keys j <= i + causal_offset. 0 aligns the mask top-left (query
  // i, key i); Tk − Tq aligns it bottom-right: the last query sees every key, as the new
  // queries of a KV cache step see the cached keys before them and themselves.
  std::int64_t causal_offset = 0;
  const unsigned char* key_padding = nullptr;  // (B, Tk), 1 = padded key; nullptr = none
  double dropout_p = 0.0;
  const std::uint64_t* seeds = nullptr;  // one dropout seed per (b, h) pair; nullptr = no dropout
  double scale = 1.0;
};

// Keys j >= visible_end are hidden from query i by the causal mask.
inline std::int64_t visible_end(std::int64_t i, const AttentionDims& d, const AttentionConfig& cfg) {
  return cfg.causal ? std::clamp(i + 1 + cfg.causal_offset, std::int64_t(0), d.Tk) : d.Tk;
}

// ---- the materialized kernels, attention_materialized.cpp. lse (B, H, Tq) is contiguous;
// q, k, v, dout, out and the gradients are read and written through their HeadLayout.
// Backward: gradient outputs first; dq, dk, dv may be nullptr when not needed (v is then only
// read when dq or dk is needed).

template <typename T>
void attention_forward(T* out, const HeadLayout& lout, T* lse, const T* q, const HeadLayout& lq, const T* k,
                       const HeadLayout& lk, const T* v, const HeadLayout& lv, const AttentionDims& d,
                       const AttentionConfig& cfg);

template <typename T>
void attention_backward(T* dq, const HeadLayout& lgq, T* dk, const HeadLayout& lgk, T* dv, const HeadLayout& lgv,
                        const T* dout, const HeadLayout& lo, const T* q, const HeadLayout& lq, const T* k,
                        const HeadLayout& lk, const T* v, const HeadLayout& lv, const T* lse, const AttentionDims& d,
                        const AttentionConfig& cfg);

// keep[i] = 1 with probability 1 - p, in row-major order, from a generator seeded for one pair.
void draw_keep(unsigned char* keep, std::int64_t n, double p, std::uint64_t seed);

// ---- the tiled ("flash") kernels, attention_flash.cpp. Same arguments as the materialized
// pair; the backward also reads the forward's output (for Δ = rowsum(dO ⊙ O)). No dropout.

template <typename T>
void flash_attention_forward(T* out, const HeadLayout& lout, T* lse, const T* q, const HeadLayout& lq, const T* k,
                             const HeadLayout& lk, const T* v, const HeadLayout& lv, const AttentionDims& d,
                             const AttentionConfig& cfg);

template <typename T>
void flash_attention_backward(T* dq, const HeadLayout& lgq, T* dk, const HeadLayout& lgk, T* dv,
                              const HeadLayout& lgv, const T* dout, const HeadLayout& lo, const T* out,
                              const HeadLayout& lout, const T* q, const HeadLayout& lq, const T* k,
                              const HeadLayout& lk, const T* v, const HeadLayout& lv, const T* lse,
                              const AttentionDims& d, const AttentionConfig& cfg);

// Query rows per block (Bq) and keys per tile (Bk) of the flash kernels.
struct FlashTiles {
  std::int64_t Bq = 0, Bk = 0;
};
FlashTiles flash_tiles();
// Testing only: small tiles make a small problem cross several tiles and partial ones.
// Returns the previous sizes; not thread-safe (call between attention calls). {0, 0} restores
// the defaults.
FlashTiles set_flash_tiles_for_testing(FlashTiles tiles);

}  // namespace tapegrad::detail
