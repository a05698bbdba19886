// attention.hpp — MultiHeadAttention (Vaswani et al. 2017, arXiv 1706.03762).
//
// Self-attention: one fused projection qkv = x·W_qkvᵀ (3·C outputs) split into H heads of
// D = C/H dims; cross-attention: queries from x (q_proj), keys and values from another
// sequence, the memory (kv_proj). Both then run the fused scaled_dot_product_attention op
// and the output projection:
//   out = out_proj(concat_h softmax(q_h·k_hᵀ/√D + mask)·v_h)
#pragma once

#include "dropout.hpp"
#include "linear.hpp"

namespace tapegrad::nn {

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
  TAPEGRAD_ARG(DType, dtype) = DType::float32;
};

class MultiHeadAttention : public Module {
 public:
  explicit MultiHeadAttention(const MultiHeadAttentionOptions& options);
  // Self-attention. x: (B, T, C); key_padding_mask: (B, T), nonzero = padded (ignored).
  Tensor forward(const Tensor& x, const Tensor& key_padding_mask = Tensor());
  // Cross-attention. x: (B, Tq, C), memory: (B, Tk, kv_dim), memory_padding_mask: (B, Tk).
  Tensor forward_cross(const Tensor& x, const Tensor& memory, const Tensor& memory_padding_mask = Tensor());
  std::string extra_repr() const override;

  MultiHeadAttentionOptions options;
  std::shared_ptr<Linear> qkv;      // self: (3C, C)
  std::shared_ptr<Linear> q_proj;   // cross: (C, C)
  std::shared_ptr<Linear> kv_proj;  // cross: (2C, kv_dim)
  std::shared_ptr<Linear> out_proj; // (C, C)
  std::shared_ptr<Dropout> resid_drop;

 private:
  // (B, T, n·C) -> n tensors (B, H, T, D), views of one permuted tensor
  TensorList split_heads(const Tensor& x, std::int64_t n) const;
  Tensor attend(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& key_padding_mask, bool causal);
};

}  // namespace tapegrad::nn
