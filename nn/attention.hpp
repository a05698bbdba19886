// attention.hpp — MultiHeadAttention (Vaswani et al. 2017, arXiv 1706.03762).
//
// Self-attention: one fused projection qkv = x·W_qkvᵀ split into H query heads of D = C/H
// dims and Hkv key and value heads; cross-attention: queries from x (q_proj), keys and values
// from another sequence, the memory (kv_proj). Both then run the fused attention op and the
// output projection:
//   out = out_proj(concat_h softmax(q_h·k_{g(h)}ᵀ/√D + mask)·v_{g(h)})
// Options of the decoders in use today, each off by default:
//   n_kv_heads  grouped-query attention (Ainslie et al. 2023): Hkv < H key/value heads, query
//               head h reading kv head g(h) = h / (H / Hkv); 1 is multi-query attention
//               (Shazeer 2019). The kv heads are read in place, never repeated.
//   qk_norm     a LayerNorm or RMSNorm of each query and key head over its D dims, before the
//               dot product (Dehghani et al. 2023 "Scaling ViT to 22B"; OLMo 2, Qwen3): keeps
//               the attention logits from growing; weights q_norm.weight, k_norm.weight (D).
//   rope        rotary position embedding of q and k (Su et al. 2021), after the QK-norm, in
//               self-attention: the model needs no position table. rope_offset() is the
//               position of x's first token (a KV cache continuing a sequence).
//   ngpt        nGPT's attention (Loshchilov et al. 2024, arXiv 2410.01131; nn/ngpt.hpp): after
//               rope, each query and key head is a unit vector times s_qk, and the softmax
//               scale is √D instead of 1/√D (unit q·k is a cosine, in [−1, 1]):
//                 q ← s_qk ⊙ Norm(q),  k ← s_qk ⊙ Norm(k),  softmax(q·kᵀ·√D)
//               s_qk: one learned scale per head and dim (H·D), stored scaled (ngpt_s_qk).
//               Self-attention only, no bias, no qk_norm, every query head its own key head.
// With a KVCache (kv_cache.hpp), self-attention stores the new tokens' keys and values in it
// and attends over every stored one: the generation path, inference only (not differentiable).
#pragma once

#include <functional>

#include "dropout.hpp"
#include "kv_cache.hpp"
#include "linear.hpp"
#include "norm.hpp"

namespace tapegrad::nn {

enum class QkNorm { none, layernorm, rmsnorm };
std::string qk_norm_name(QkNorm n);
QkNorm qk_norm_from_name(const std::string& name);  // ValueError naming the choices

struct MultiHeadAttentionOptions {
  MultiHeadAttentionOptions(std::int64_t d_model, std::int64_t n_heads) : d_model_(d_model), n_heads_(n_heads) {}
  TAPEGRAD_ARG(std::int64_t, d_model);
  TAPEGRAD_ARG(std::int64_t, n_heads);
  TAPEGRAD_ARG(bool, causal) = false;       // query i sees keys j <= i (self-attention)
  TAPEGRAD_ARG(bool, cross) = false;        // keys and values come from a memory sequence
  TAPEGRAD_ARG(std::int64_t, kv_dim) = 0;   // feature size of the memory (0: d_model)
  TAPEGRAD_ARG(bool, bias) = true;
  TAPEGRAD_ARG(double, attn_dropout) = 0.0;   // on the attention probabilities
  TAPEGRAD_ARG(double, resid_dropout) = 0.0;  // on the output
  TAPEGRAD_ARG(std::int64_t, n_kv_heads) = 0;  // key/value heads, a divisor of n_heads (0: n_heads)
  TAPEGRAD_ARG(QkNorm, qk_norm) = QkNorm::none;
  TAPEGRAD_ARG(double, qk_norm_eps) = 1e-6;
  TAPEGRAD_ARG(bool, rope) = false;             // self-attention only
  TAPEGRAD_ARG(double, rope_theta) = 10000.0;
  TAPEGRAD_ARG(bool, rope_interleaved) = false;  // pairs (x_2i, x_2i+1); default (x_i, x_i+D/2)
  TAPEGRAD_ARG(bool, ngpt) = false;              // unit q and k times s_qk, softmax scale √D
  TAPEGRAD_ARG(DType, dtype) = DType::float32;

  std::int64_t kv_heads() const { return n_kv_heads_ > 0 ? n_kv_heads_ : n_heads_; }
  std::int64_t head_dim() const { return d_model_ / n_heads_; }
};

class MultiHeadAttention : public Module {
 public:
  explicit MultiHeadAttention(const MultiHeadAttentionOptions& options);
  // Self-attention. x: (B, T, C); key_padding_mask: (B, T), nonzero = padded (ignored).
  // position: of x's first token, for rope (a continued sequence); 0 otherwise.
  // cache: x's tokens are positions cache->length() .. + T − 1 (position must equal
  // cache->length()): their keys and values go into layer `layer` of the cache and the queries
  // attend over all of its keys, bottom-right causal (query i sees keys j <= i + length).
  // Inference only: refused in grad mode when a parameter or x requires grad; no padding mask.
  // values: v (B, T, Hkv·D) -> the values the heads attend to (and the cache keeps), for a
  // stream that mixes values across blocks (nn/stream/value_residual.cpp); empty: v itself.
  Tensor forward(const Tensor& x, const Tensor& key_padding_mask = Tensor(), std::int64_t position = 0,
                 KVCache* cache = nullptr, std::int64_t layer = 0,
                 const std::function<Tensor(const Tensor&)>& values = {});
  // Cross-attention. x: (B, Tq, C), memory: (B, Tk, kv_dim), memory_padding_mask: (B, Tk).
  Tensor forward_cross(const Tensor& x, const Tensor& memory, const Tensor& memory_padding_mask = Tensor());
  std::string extra_repr() const override;

  MultiHeadAttentionOptions options;
  std::shared_ptr<Linear> qkv;      // self: ((H + 2·Hkv)·D, C), rows [q | k | v]
  std::shared_ptr<Linear> q_proj;   // cross: (C, C)
  std::shared_ptr<Linear> kv_proj;  // cross: (2·Hkv·D, kv_dim), rows [k | v]
  std::shared_ptr<Linear> out_proj; // (C, C)
  std::shared_ptr<Norm> q_norm, k_norm;  // qk_norm: over each head's D dims; null otherwise
  Tensor s_qk;                      // ngpt: s̃ of s_qk, (H·D) = (C); undefined otherwise
  std::shared_ptr<Dropout> resid_drop;

 private:
  // (B, T, n·D) -> (B, n, T, D), a view
  Tensor split_heads(const Tensor& x, std::int64_t n) const;
  // The packed projection (B, T, (H + 2·Hkv)·D) with q and k normalized (qk_norm), rotated
  // (rope, from position) and, with ngpt, made unit and scaled by s_qk: what the fused
  // self-attention reads.
  Tensor prepare_qk(const Tensor& qkv, std::int64_t position);
  Tensor attend(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& key_padding_mask, bool causal,
                std::int64_t causal_offset = 0);
  // The cached step: packed (B, Tn, (H + 2·Hkv)·D) after prepare_qk.
  Tensor attend_cached(const Tensor& packed, KVCache& cache, std::int64_t layer);
};

}  // namespace tapegrad::nn
