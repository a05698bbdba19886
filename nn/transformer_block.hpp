// transformer_block.hpp — one transformer layer, in any norm placement and norm kind:
// self-attention (causal or not), optional cross-attention to a memory sequence, and a
// feed-forward sublayer, each joined to the residual stream by a Residual (residual.hpp).
//
//   pre       h = α·x + Attn(N1(x));            y = α·h + FFN(N2(h))
//   post      h = N1(α·x + Attn(x));            y = N2(α·h + FFN(h))
//   deepnorm  post with α = the config's residual_scale (the model sets DeepNorm's alpha)
//   b2t       h = N1(x + Attn(x));              y = N2(h + FFN(h) + x)
//             (decoder: h1 = N1(x + SA(x)), h2 = N2(h1 + CA(h1)), y = N3(h2 + FFN(h2) + x))
//   rezero    h = x + a1·Attn(x);               y = h + a2·FFN(h)
//   none      h = N1(Attn(x));                  y = N2(FFN(h))
// With norm = adaln_zero (DiT, placement pre only), one zero-initialized Linear of the
// condition gives shift, scale and gate per sublayer, and each block starts as the identity:
//   h = x + gate1 ⊙ Attn(modulate(LN(x), shift1, scale1)), y = h + gate2 ⊙ FFN(modulate(LN(h), ...))
#pragma once

#include "activation.hpp"
#include "attention.hpp"
#include "feed_forward.hpp"
#include "residual.hpp"

namespace tapegrad::nn {

struct TransformerBlockConfig {
  std::int64_t d_model = 128;
  std::int64_t n_heads = 4;
  std::int64_t d_ff = 0;  // 0: 4·d_model
  Activation activation = Activation::gelu;
  NormKind norm = NormKind::layernorm;
  Placement placement = Placement::pre;
  double residual_scale = 1.0;  // α in the formulas above
  double dropout = 0.0;         // on each sublayer's output
  double attn_dropout = 0.0;    // on the attention probabilities
  bool causal = false;
  bool cross_attention = false;
  double norm_eps = 1e-5;
  bool bias = true;
  std::int64_t cond_dim = 0;  // size of the condition vector for adaln / adaln_zero
  DType dtype = DType::float32;

  std::int64_t ff_dim() const { return d_ff > 0 ? d_ff : 4 * d_model; }
  // Throws ValueError naming the first invalid setting.
  void validate() const;
};

// What a block may need besides its input.
struct BlockContext {
  Tensor key_padding_mask;     // (B, T), nonzero = padded
  Tensor memory;               // (B, Tk, C) for cross-attention
  Tensor memory_padding_mask;  // (B, Tk)
  Tensor cond;                 // (B, cond_dim) for adaln norms
};

class TransformerBlock : public Module {
 public:
  explicit TransformerBlock(const TransformerBlockConfig& config);
  // x: (B, T, d_model) -> (B, T, d_model)
  Tensor forward(const Tensor& x, const BlockContext& ctx = {});
  std::string extra_repr() const override;

  TransformerBlockConfig config;
  std::shared_ptr<MultiHeadAttention> attn, cross_attn;
  std::shared_ptr<FeedForward> ffn;
  std::shared_ptr<Residual> attn_residual, cross_residual, ffn_residual;  // not for adaln_zero
  std::shared_ptr<Module> norm1, norm2, norm3;  // adaln_zero only: LN without affine
  std::shared_ptr<Linear> modulation;           // adaln_zero only: cond -> 3 vectors per sublayer

 private:
  Tensor forward_adaln_zero(const Tensor& x, const BlockContext& ctx);
};

}  // namespace tapegrad::nn
