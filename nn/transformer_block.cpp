// transformer_block.cpp — TransformerBlock: builds the sublayers and what its placement asks
// for (norms, ReZero gates, α), then hands the formula the sublayers of each forward call.
#include "transformer_block.hpp"

#include <algorithm>
#include <cmath>
#include <tuple>

#include "../autograd/checkpoint.hpp"
#include "../autograd/ops.hpp"
#include "ada_ln.hpp"
#include "name_list.hpp"

namespace tapegrad::nn {

void TransformerBlockConfig::validate() const {
  if (d_model <= 0 || n_heads <= 0 || d_model % n_heads != 0)
    throw ValueError("TransformerBlockConfig: d_model (" + std::to_string(d_model) +
                     ") must be a positive multiple of n_heads (" + std::to_string(n_heads) + ")");
  if (ff_dim() <= 0) throw ValueError("TransformerBlockConfig: d_ff must be >= 0, got " + std::to_string(d_ff));
  if (!(dropout >= 0 && dropout < 1)) throw ValueError("TransformerBlockConfig: dropout must be in [0, 1), got " + number_str(dropout));
  if (!(attn_dropout >= 0 && attn_dropout < 1))
    throw ValueError("TransformerBlockConfig: attn_dropout must be in [0, 1), got " + number_str(attn_dropout));
  if (!(norm_eps > 0)) throw ValueError("TransformerBlockConfig: norm_eps must be positive");
  if (n_kv_heads < 0 || (n_kv_heads > 0 && n_heads % n_kv_heads != 0))
    throw ValueError("TransformerBlockConfig: n_kv_heads (" + std::to_string(n_kv_heads) + ") must divide n_heads (" +
                     std::to_string(n_heads) + "); 0 means n_heads");
  if (rope && (d_model / n_heads) % 2 != 0)
    throw ValueError("TransformerBlockConfig: rope needs an even head dim, d_model / n_heads = " +
                     std::to_string(d_model / n_heads));
  if (!(rope_theta > 1)) throw ValueError("TransformerBlockConfig: rope_theta must be > 1, got " + number_str(rope_theta));
  const PlacementInfo& p = placement_info(placement);
  const NormInfo& n = norm_info(norm);
  if (n.conditional && cond_dim <= 0)
    throw ValueError("TransformerBlockConfig: norm " + n.name + " needs cond_dim > 0");
  if (!p.norms && norm != NormKind::layernorm)
    throw ValueError("TransformerBlockConfig: norm " + n.name + " does not apply to placement " + p.name +
                     ", which has no norms; leave norm at layernorm");
  if (n.block_modulated && !p.block_modulation)
    throw ValueError("TransformerBlockConfig: " + n.name + " is a pre-norm design (DiT); placement must be " +
                     name_list_if(placement_registry(), [](const PlacementInfo& q) { return q.block_modulation; }) +
                     ", got " + p.name);
  if (residual_scale != 1.0 && !p.residual_scale)
    throw ValueError("TransformerBlockConfig: residual_scale = " + number_str(residual_scale) +
                     " does not apply to placement " + p.name + " (only " +
                     name_list_if(placement_registry(), [](const PlacementInfo& q) { return q.residual_scale; }, " and ") +
                     " scale the residual" + (p.depth_alpha ? "; " + p.name + " sets α from the depth" : "") +
                     "); leave it at 1");
  const TransformerBlockConfig defaults;
  for (auto [name, value, default_value] : {std::tuple{"norm_alpha0_attn", norm_alpha0_attn, defaults.norm_alpha0_attn},
                                            std::tuple{"norm_alpha0_ffn", norm_alpha0_ffn, defaults.norm_alpha0_ffn},
                                            std::tuple{"norm_alpha0_final", norm_alpha0_final, defaults.norm_alpha0_final}}) {
    if (!(value > 0 && std::isfinite(value)))
      throw ValueError(std::string("TransformerBlockConfig: ") + name + " (α at init of dyt and derf) must be positive "
                       "and finite, got " + number_str(value));
    if (value != default_value && !n.learned_alpha)
      throw ValueError(std::string("TransformerBlockConfig: ") + name + " = " + number_str(value) + " does not apply to norm " +
                       n.name + " (only " + name_list_if(norm_registry(), [](const NormInfo& m) { return m.learned_alpha; }, " and ") +
                       " have a learned α); leave it at " + number_str(default_value));
  }
  if (!(branch_depth_exponent >= 0 && branch_depth_exponent <= 1) || branch_base_depth < 1)
    throw ValueError("TransformerBlockConfig: branch_depth_exponent must be in [0, 1] (0 standard, 0.5 depth-μP, 1 "
                     "CompleteP) and branch_base_depth >= 1, got " + number_str(branch_depth_exponent) + " and " +
                     std::to_string(branch_base_depth));
  if (branch_depth_exponent != 0.0 && !p.branch_multiplier)
    throw ValueError("TransformerBlockConfig: branch_depth_exponent = " + number_str(branch_depth_exponent) +
                     " does not apply to placement " + p.name + ", whose updates pass a norm before they join the "
                     "stream (it would undo the multiplier); leave it at 0");
  if (p.hypersphere) {  // nGPT's block as the paper has it, or a refusal naming the setting
    const char* clash = activation != Activation::swiglu ? "activation other than swiglu (nGPT scales SwiGLU's u and v)"
                        : bias ? "bias (nGPT's matrices are unit vectors along d_model, with no bias)"
                        : !rope ? "learned positions (nGPT's positions are rotary: set rope)"
                        : qk_norm != QkNorm::none ? "qk_norm (nGPT normalizes q and k itself, times s_qk)"
                        : n_kv_heads != 0 && n_kv_heads != n_heads ? "n_kv_heads (s_qk scales each query head and its own key head)"
                        : cross_attention ? "cross_attention (nGPT is a decoder-only design)"
                                          : nullptr;
    if (clash) throw ValueError("TransformerBlockConfig: placement " + p.name + " does not go with " + clash);
  }
  if (!(mix_ln_ratio >= 0 && mix_ln_ratio <= 1))
    throw ValueError("TransformerBlockConfig: mix_ln_ratio must be in [0, 1] (the fraction of a stack's blocks that "
                     "Mix-LN makes Post-LN), got " + number_str(mix_ln_ratio));
  const double default_ratio = defaults.mix_ln_ratio;
  if (mix_ln_ratio != default_ratio && !p.mix_ln_ratio)
    throw ValueError("TransformerBlockConfig: mix_ln_ratio = " + number_str(mix_ln_ratio) + " does not apply to placement " +
                     p.name + " (only " +
                     name_list_if(placement_registry(), [](const PlacementInfo& q) { return q.mix_ln_ratio; }, " and ") +
                     " mixes Post-LN and Pre-LN blocks); leave it at " + number_str(default_ratio));
}

double TransformerBlockConfig::norm_alpha0(NormRole role) const {
  switch (role) {
    case NormRole::attention:
    case NormRole::cross: return norm_alpha0_attn;  // the paper's "attention blocks"
    case NormRole::ffn: return norm_alpha0_ffn;
    case NormRole::final: return norm_alpha0_final;
  }
  return norm_alpha0_attn;
}

double TransformerBlockConfig::branch_multiplier(std::int64_t layers) const {
  if (branch_depth_exponent == 0.0) return 1.0;
  return std::pow(static_cast<double>(branch_base_depth) / static_cast<double>(layers), branch_depth_exponent);
}

NormSpec TransformerBlockConfig::norm_spec(NormRole role) const {
  return {d_model, norm_eps, cond_dim, dtype, role, norm_alpha0(role)};
}

TransformerBlock::TransformerBlock(const TransformerBlockConfig& c, const Stack& s)
    : Module("TransformerBlock"), config(c), stack(s) {
  c.validate();
  if (s.index < 0 || s.index >= std::max<std::int64_t>(s.layers(), 1))
    throw ValueError("TransformerBlock: stack index " + std::to_string(s.index) + " is not one of its " +
                     std::to_string(s.layers()) + " blocks (Stack::at(i), i in 0 .. layers - 1)");
  placement_ = &placement_info(c.placement);
  const PlacementInfo& p = *placement_;
  const NormInfo& norm = norm_info(c.norm);
  auto attention_options = [&] {
    return MultiHeadAttentionOptions(c.d_model, c.n_heads).bias(c.bias).attn_dropout(c.attn_dropout)
        .resid_dropout(c.dropout).n_kv_heads(c.n_kv_heads).qk_norm(c.qk_norm).qk_norm_eps(c.norm_eps).dtype(c.dtype)
        .ngpt(p.hypersphere);
  };
  attn = register_module("attn", std::make_shared<MultiHeadAttention>(
                                     attention_options().causal(c.causal).rope(c.rope).rope_theta(c.rope_theta)
                                         .rope_interleaved(c.rope_interleaved)));
  if (c.cross_attention)
    cross_attn = register_module("cross_attn", std::make_shared<MultiHeadAttention>(attention_options().cross(true)));
  ffn = register_module("ffn", std::make_shared<FeedForward>(FeedForwardOptions(c.d_model, c.ff_dim())
                                                                 .activation(c.activation).bias(c.bias)
                                                                 .dropout(c.dropout).dtype(c.dtype).ngpt(p.hypersphere)));
  // α: set by the depth (DeepNorm), by residual_scale where it applies, else 1.
  const double alpha = p.depth_alpha ? p.depth_alpha(s) : p.residual_scale ? c.residual_scale : 1.0;
  auto residual = [&](const std::string& name, NormRole role) {
    const NormSpec spec = c.norm_spec(role);
    std::shared_ptr<Norm> n, n_out;
    if (p.norms) n = make_norm(c.norm, spec);
    if (p.output_norms) n_out = make_norm(c.norm, spec);
    auto r = register_module(name, std::make_shared<Residual>(n, alpha, p.rezero_gates, c.dtype, n_out,
                                                              p.hypersphere ? c.d_model : 0));
    r->branch = c.branch_multiplier(std::max<std::int64_t>(s.layers(), 1));
    return r;
  };
  attn_residual = residual("attn_residual", NormRole::attention);
  if (c.cross_attention) cross_residual = residual("cross_residual", NormRole::cross);
  ffn_residual = residual("ffn_residual", NormRole::ffn);
  if (norm.block_modulated) {  // AdaLN-Zero: [shift, scale, gate] for each sublayer from one Linear
    const std::int64_t n_vectors = 3 * (c.cross_attention ? 3 : 2);
    modulation = register_module("modulation", std::make_shared<Linear>(LinearOptions(c.cond_dim, n_vectors * c.d_model).dtype(c.dtype)));
    modulation->weight.fill_(0.0);  // every gate starts at 0: the block is the identity
    modulation->bias.fill_(0.0);
  }
  if (p.block_gate) gate = register_parameter("gate", zeros({}, c.dtype));
  formula_ = p.make(c, s);
}

Tensor TransformerBlock::forward(const Tensor& input, const BlockContext& context) {
  Tensor x = input;
  BlockContext ctx = context;
  ForwardCall call(*this, {&x, &ctx.key_padding_mask, &ctx.memory, &ctx.memory_padding_mask, &ctx.cond});
  if (!ctx.formula && (x.dim() != 3 || x.size(2) != config.d_model))
    throw ShapeError("TransformerBlock: input must be (B, T, d_model = " + std::to_string(config.d_model) + "), got " +
                     shape_str(x.shape()));
  if (ctx.formula && (x.dim() < 3 || x.size(-1) != config.d_model))
    throw ShapeError("TransformerBlock: the stream's formula needs an input of at least 3 dims ending in d_model = " +
                     std::to_string(config.d_model) + ", got " + shape_str(x.shape()));
  if (config.cross_attention && !ctx.memory.defined())
    throw ValueError("TransformerBlock: cross-attention needs ctx.memory (the encoder output)");
  if (modulation && (!ctx.cond.defined() || ctx.cond.dim() != 2 || ctx.cond.size(1) != config.cond_dim))
    throw ShapeError("TransformerBlock: " + config.norm.name + " needs ctx.cond of shape (B, " +
                     std::to_string(config.cond_dim) + "), got " +
                     (ctx.cond.defined() ? shape_str(ctx.cond.shape()) : std::string("none")));
  // A cached step runs without grad: there is nothing to checkpoint.
  if (!checkpoint_activations || ctx.kv_cache) return call.output(compute(x, ctx));
  if (ctx.values || ctx.formula)  // the recomputed block would lose what the callback shares with other blocks
    throw ValueError(std::string("TransformerBlock: activation checkpointing recomputes a block alone, but ctx.") +
                     (ctx.values ? "values" : "formula") + " (a stream scheme that joins blocks inside them, as " +
                     (ctx.values ? "value_residual" : "hyper_connections") + ") reaches outside it; turn one of them off");
  // Keep the inputs only; the backward runs compute() again (autograd/checkpoint.hpp).
  const CheckpointFn block = [this](const TensorList& in) {
    return compute(in[0], {in[1], in[2], in[3], in[4], nullptr, {}, {}});
  };
  return call.output(checkpoint(block, {x, ctx.key_padding_mask, ctx.memory, ctx.memory_padding_mask, ctx.cond}));
}

Tensor TransformerBlock::compute(const Tensor& x, const BlockContext& ctx) {
  // The condition of each sublayer's norm: the model's (AdaLN reads it; LayerNorm ignores it)
  // or, under AdaLN-Zero, that sublayer's [shift, scale, gate] regressed from it by the block.
  TensorList cond(config.cross_attention ? 3 : 2, ctx.cond);
  if (modulation) cond = chunk(modulation->forward(silu(ctx.cond)), static_cast<std::int64_t>(cond.size()), 1);  // each (B, 3C)
  BlockSublayers F;
  F.attn = Sublayer([&](const Tensor& h) {
    if (!ctx.kv_cache) return attn->forward(h, ctx.key_padding_mask, 0, nullptr, 0, ctx.values);
    return attn->forward(h, ctx.key_padding_mask, ctx.kv_cache->length(), ctx.kv_cache, stack.index, ctx.values);
  }, *attn_residual, cond[0]);
  if (cross_attn)
    F.cross = Sublayer([&](const Tensor& h) { return cross_attn->forward_cross(h, ctx.memory, ctx.memory_padding_mask); },
                       *cross_residual, cond[1]);
  F.ffn = Sublayer([&](const Tensor& h) { return ffn->forward(h); }, *ffn_residual, cond.back());
  F.gate = gate;
  return ctx.formula ? ctx.formula(x, F) : formula_->forward(x, F);
}

std::string TransformerBlock::extra_repr() const {
  return "placement=" + config.placement.name + ", norm=" + config.norm.name + (config.causal ? ", causal" : "") +
         (config.cross_attention ? ", cross_attention" : "");
}

}  // namespace tapegrad::nn
