// transformer_block.hpp — one transformer layer: self-attention (causal or not), optional
// cross-attention to a memory sequence, and a feed-forward network, joined to the residual
// stream by the config's placement (nn/placement/: one unit per formula) with the config's
// norm (nn/norm_kind.hpp). `train_lm --help` lists the placements with their formulas:
//
//   pre       h = α·x + Attn(N1(x));   y = α·h + FFN(N2(h))
//   post      h = N1(α·x + Attn(x));   y = N2(α·h + FFN(h))
//   b2t       h = N1(x + Attn(x));     y = N2(h + FFN(h) + x)
//   ...
// A decoder block has a cross-attention sublayer between the two, with its norm N3.
// With norm = adaln_zero (DiT, Pre-LN only), one zero-initialized Linear of the condition
// gives shift, scale and gate per sublayer, and each block starts as the identity:
//   h = x + gate1 ⊙ Attn(LN(x)·(1 + scale1) + shift1), ...
#pragma once

#include <string>

#include "activation.hpp"
#include "attention.hpp"
#include "feed_forward.hpp"
#include "norm_kind.hpp"
#include "placement/placement.hpp"

namespace tapegrad::nn {

struct TransformerBlockConfig {
  std::int64_t d_model = 128;
  std::int64_t n_heads = 4;
  std::int64_t d_ff = 0;  // 0: 4·d_model
  Activation activation = Activation::gelu;
  NormKind norm{"layernorm"};
  Placement placement{"pre"};
  double residual_scale = 1.0;  // α in the pre and post formulas; refused elsewhere unless 1
  // ρ of Mix-LN: the first ⌊ρL⌋ blocks of a stack of L are Post-LN, the rest Pre-LN (Li et al.
  // 2024's α, 0.25 there); in [0, 1], refused by the other placements unless left at 0.25.
  double mix_ln_ratio = 0.25;
  double dropout = 0.0;         // on each sublayer's output
  double attn_dropout = 0.0;    // on the attention probabilities
  bool causal = false;
  bool cross_attention = false;
  double norm_eps = 1e-5;
  bool bias = true;
  std::int64_t cond_dim = 0;  // size of the condition vector for adaln / adaln_zero
  DType dtype = DType::float32;
  // The decoders in use today (attention.hpp has the papers):
  std::int64_t n_kv_heads = 0;    // key/value heads of the attention sublayers (GQA), a divisor of n_heads; 0: n_heads
  QkNorm qk_norm = QkNorm::none;  // a norm of each query and key head before the dot product (eps: norm_eps)
  bool rope = false;              // rotary positions in self-attention; a TransformerLM then has no position table
  double rope_theta = 10000.0;    // RoPE's frequency base
  bool rope_interleaved = false;  // RoPE pairs (x_2i, x_2i+1) (Meta's layout) instead of (x_i, x_i+D/2) (HF's)
  // α at init of the norms with a learned α (dyt, derf), by role: the norms of the attention
  // sublayers (cross-attention's too), of the FFN, and the stack's final norm. DyT's authors
  // tuned them for LLaMA (arXiv 2503.10622, Table 12, attention/other by width, the same at
  // depths 8 to 64): 1.0/1.0 at width 1024, 1.0/0.5 at 2048, 0.8/0.2 at 4096, 0.2/0.05 at 8192,
  // and "other" covers the FFN and the final norm. Wider wants smaller; tapegrad's models are
  // 1024 wide or narrower, hence 1.0 for all three, as Derf's GPT-2 code starts them too. The
  // other norms refuse a value other than 1.
  double norm_alpha0_attn = 1.0;
  double norm_alpha0_ffn = 1.0;
  double norm_alpha0_final = 1.0;
  // Depth-μP / CompleteP (Bordelon et al. 2024; Yang et al. 2024; Dey et al. 2025, "Don't be
  // lazy: CompleteP enables compute-efficient deep transformers", arXiv 2505.01618): every
  // sublayer's update enters the stream times m = (branch_base_depth / L)^branch_depth_exponent,
  // L the blocks of the stack: x + m·F(N(x)) in Pre-LN. Exponent 0 is the standard
  // parametrization (m = 1, nothing recorded), ½ depth-μP, 1 CompleteP; the base depth is the
  // depth whose tuned hyper-parameters should transfer (optim::depth_scaled_groups scales the
  // Adam learning rate and ε to match). Refused by the placements whose update passes a norm
  // before it joins the stream (the norm would undo m).
  double branch_depth_exponent = 0.0;
  std::int64_t branch_base_depth = 1;

  std::int64_t ff_dim() const { return d_ff > 0 ? d_ff : 4 * d_model; }
  // The α0 of a role: norm_alpha0_attn for attention and cross, _ffn for ffn, _final for final.
  double norm_alpha0(NormRole role) const;
  // m = (branch_base_depth / layers)^branch_depth_exponent: 1 unless the exponent is set.
  double branch_multiplier(std::int64_t layers) const;
  // What this config's norm of a role is built from (make_norm, make_final_norm).
  NormSpec norm_spec(NormRole role) const;
  // Throws ValueError naming the first invalid setting, or a setting its placement does not use.
  void validate() const;
  bool operator==(const TransformerBlockConfig&) const = default;

  // Every field with its name, in order: f("d_model", self.d_model), ... (for files and
  // printing: io/model_config.hpp). A new field must be added here, or files lose it.
  template <typename Self, typename F>
  static void visit_fields(Self& self, F&& f) {
    f("d_model", self.d_model);
    f("n_heads", self.n_heads);
    f("d_ff", self.d_ff);
    f("activation", self.activation);
    f("norm", self.norm);
    f("placement", self.placement);
    f("residual_scale", self.residual_scale);
    f("mix_ln_ratio", self.mix_ln_ratio);
    f("dropout", self.dropout);
    f("attn_dropout", self.attn_dropout);
    f("causal", self.causal);
    f("cross_attention", self.cross_attention);
    f("norm_eps", self.norm_eps);
    f("bias", self.bias);
    f("cond_dim", self.cond_dim);
    f("dtype", self.dtype);
    f("n_kv_heads", self.n_kv_heads);  // model config version 2 (older files: the defaults)
    f("qk_norm", self.qk_norm);
    f("rope", self.rope);
    f("rope_theta", self.rope_theta);
    f("rope_interleaved", self.rope_interleaved);
    f("norm_alpha0_attn", self.norm_alpha0_attn);  // model config version 3 (older files: the defaults)
    f("norm_alpha0_ffn", self.norm_alpha0_ffn);
    f("norm_alpha0_final", self.norm_alpha0_final);
    f("branch_depth_exponent", self.branch_depth_exponent);  // model config version 4
    f("branch_base_depth", self.branch_base_depth);
  }
};

// What a block may need besides its input.
struct BlockContext {
  Tensor key_padding_mask;     // (B, T), nonzero = padded
  Tensor memory;               // (B, Tk, C) for cross-attention
  Tensor memory_padding_mask;  // (B, Tk)
  Tensor cond;                 // (B, cond_dim) for adaln norms
  // Generation: the self-attention reads and extends layer stack.index of this cache, x being
  // the tokens at positions kv_cache->length() on (MultiHeadAttention::forward). Inference only.
  KVCache* kv_cache = nullptr;
  // The stream's hand in the self-attention's values (nn/stream/value_residual.cpp): v ->
  // what the heads attend to. Empty: the values as they are.
  std::function<Tensor(const Tensor&)> values;
  // The stream's own formula for this block, in place of its placement's (schemes that join
  // each sublayer to more than one tensor: nn/stream/hyper_connections.cpp). It gets what the
  // stream passes as x, whose last dim is d_model (Hyper-Connections: the n streams (B, T, n,
  // C)), and the block's sublayers. Empty: the placement's formula, on x (B, T, C).
  std::function<Tensor(const Tensor& x, const BlockSublayers& F)> formula;
};

class TransformerBlock : public Module {
 public:
  // stack: where the block sits (DeepNorm's α depends on the depth); a block built alone is
  // taken for a 1-block decoder-only stack.
  explicit TransformerBlock(const TransformerBlockConfig& config, const Stack& stack = {});
  // x: (B, T, d_model) -> (B, T, d_model). Hook inputs: {x, key_padding_mask, memory,
  // memory_padding_mask, cond}.
  Tensor forward(const Tensor& x, const BlockContext& ctx = {});
  std::string extra_repr() const override;
  // The registry entry of this block's placement.
  const PlacementInfo& placement() const { return *placement_; }

  TransformerBlockConfig config;
  Stack stack;
  std::shared_ptr<MultiHeadAttention> attn, cross_attn;
  std::shared_ptr<FeedForward> ffn;
  // One per sublayer: its norm, α and ReZero gate (residual.hpp).
  std::shared_ptr<Residual> attn_residual, cross_residual, ffn_residual;
  std::shared_ptr<Linear> modulation;  // adaln_zero only: cond -> [shift, scale, gate] per sublayer
  Tensor gate;  // the placement's block gate (GPAS's β): a 0-d parameter, 0 at init; undefined otherwise

  // Activation checkpointing (autograd/checkpoint.hpp): when on, forward keeps only the
  // block's inputs and the backward recomputes the block, with the same dropout masks. The
  // gradients are those of the plain block; the block must outlive the graph it is in.
  bool checkpoint_activations = false;

 private:
  Tensor compute(const Tensor& x, const BlockContext& ctx);  // the block itself, below its hooks
  const PlacementInfo* placement_;
  std::unique_ptr<PlacementFormula> formula_;
};

}  // namespace tapegrad::nn
