// transformer_block.cpp — TransformerBlock.
#include "transformer_block.hpp"

#include "../autograd/ops.hpp"
#include "ada_ln.hpp"
#include "norm.hpp"

namespace tapegrad::nn {

void TransformerBlockConfig::validate() const {
  if (d_model <= 0 || n_heads <= 0 || d_model % n_heads != 0)
    throw ValueError("TransformerBlockConfig: d_model (" + std::to_string(d_model) +
                     ") must be a positive multiple of n_heads (" + std::to_string(n_heads) + ")");
  if (ff_dim() <= 0) throw ValueError("TransformerBlockConfig: d_ff must be >= 0, got " + std::to_string(d_ff));
  if (!(dropout >= 0 && dropout < 1)) throw ValueError("TransformerBlockConfig: dropout must be in [0, 1), got " + std::to_string(dropout));
  if (!(attn_dropout >= 0 && attn_dropout < 1))
    throw ValueError("TransformerBlockConfig: attn_dropout must be in [0, 1), got " + std::to_string(attn_dropout));
  if (!(norm_eps > 0)) throw ValueError("TransformerBlockConfig: norm_eps must be positive");
  const bool ada = norm == NormKind::adaln || norm == NormKind::adaln_zero;
  if (ada && cond_dim <= 0)
    throw ValueError("TransformerBlockConfig: norm " + norm_kind_name(norm) + " needs cond_dim > 0");
  if (norm == NormKind::adaln_zero && placement != Placement::pre)
    throw ValueError("TransformerBlockConfig: adaln_zero is a pre-norm design (DiT); placement must be pre, got " +
                     placement_name(placement));
}

TransformerBlock::TransformerBlock(const TransformerBlockConfig& c) : Module("TransformerBlock"), config(c) {
  c.validate();
  attn = register_module("attn", std::make_shared<MultiHeadAttention>(
                                     MultiHeadAttentionOptions(c.d_model, c.n_heads).causal(c.causal).bias(c.bias)
                                         .attn_dropout(c.attn_dropout).resid_dropout(c.dropout).dtype(c.dtype)));
  if (c.cross_attention)
    cross_attn = register_module("cross_attn", std::make_shared<MultiHeadAttention>(
                                                   MultiHeadAttentionOptions(c.d_model, c.n_heads).cross(true).bias(c.bias)
                                                       .attn_dropout(c.attn_dropout).resid_dropout(c.dropout).dtype(c.dtype)));
  ffn = register_module("ffn", std::make_shared<FeedForward>(FeedForwardOptions(c.d_model, c.ff_dim())
                                                                 .activation(c.activation).bias(c.bias)
                                                                 .dropout(c.dropout).dtype(c.dtype)));
  if (c.norm == NormKind::adaln_zero) {
    const double eps = c.norm_eps;
    auto plain_ln = [&] { return std::make_shared<LayerNorm>(NormOptions(c.d_model).eps(eps).elementwise_affine(false).dtype(c.dtype)); };
    norm1 = register_module("norm1", plain_ln());
    if (c.cross_attention) norm3 = register_module("norm3", plain_ln());
    norm2 = register_module("norm2", plain_ln());
    const std::int64_t n_vectors = 3 * (c.cross_attention ? 3 : 2);
    modulation = register_module("modulation", std::make_shared<Linear>(LinearOptions(c.cond_dim, n_vectors * c.d_model).dtype(c.dtype)));
    modulation->weight.fill_(0.0);  // AdaLN-Zero: every gate starts at 0, the block is the identity
    modulation->bias.fill_(0.0);
    return;
  }
  auto norm = [&] { return make_norm(c.norm, c.d_model, c.norm_eps, c.cond_dim, c.dtype); };
  auto residual = [&](const std::string& name) {
    switch (c.placement) {
      case Placement::pre: return register_module(name, std::make_shared<Residual>(Residual::Form::pre, norm(), c.residual_scale));
      case Placement::post:
      case Placement::deepnorm:
      case Placement::b2t: {
        const double alpha = c.placement == Placement::b2t ? 1.0 : c.residual_scale;
        return register_module(name, std::make_shared<Residual>(Residual::Form::post, norm(), alpha));
      }
      case Placement::rezero: return register_module(name, std::make_shared<Residual>(Residual::Form::rezero, nullptr, 1.0, c.dtype));
      case Placement::none: return register_module(name, std::make_shared<Residual>(Residual::Form::none, norm()));
    }
    throw ValueError("TransformerBlock: unknown placement");
  };
  attn_residual = residual("attn_residual");
  if (c.cross_attention) cross_residual = residual("cross_residual");
  ffn_residual = residual("ffn_residual");
}

Tensor TransformerBlock::forward(const Tensor& x, const BlockContext& ctx) {
  const auto scope = anomaly_scope();
  if (x.dim() != 3 || x.size(2) != config.d_model)
    throw ShapeError("TransformerBlock: input must be (B, T, d_model = " + std::to_string(config.d_model) + "), got " +
                     shape_str(x.shape()));
  if (config.cross_attention && !ctx.memory.defined())
    throw ValueError("TransformerBlock: cross-attention needs ctx.memory (the encoder output)");
  if (config.norm == NormKind::adaln_zero) return forward_adaln_zero(x, ctx);

  const Sublayer self_attention = [&](const Tensor& h) { return attn->forward(h, ctx.key_padding_mask); };
  const Sublayer cross_attention = [&](const Tensor& h) {
    return cross_attn->forward_cross(h, ctx.memory, ctx.memory_padding_mask);
  };
  const Sublayer feed_forward = [&](const Tensor& h) { return ffn->forward(h); };
  // B2T: the block input joins the residual sum just before the block's last norm.
  const Tensor skip = config.placement == Placement::b2t ? x : Tensor();

  Tensor h = attn_residual->forward(x, self_attention, ctx.cond);
  if (cross_residual) h = cross_residual->forward(h, cross_attention, ctx.cond);
  return ffn_residual->forward(h, feed_forward, ctx.cond, skip);
}

Tensor TransformerBlock::forward_adaln_zero(const Tensor& x, const BlockContext& ctx) {
  if (!ctx.cond.defined() || ctx.cond.dim() != 2 || ctx.cond.size(1) != config.cond_dim)
    throw ShapeError("TransformerBlock: adaln_zero needs ctx.cond of shape (B, " + std::to_string(config.cond_dim) +
                     "), got " + (ctx.cond.defined() ? shape_str(ctx.cond.shape()) : std::string("none")));
  // shift, scale, gate for each sublayer, each (B, C)
  const TensorList m = chunk(modulation->forward(silu(ctx.cond)), config.cross_attention ? 9 : 6, 1);
  auto gated = [&](const Tensor& gate, const Tensor& update) {
    return mul(update, gate.reshape({gate.size(0), 1, gate.size(1)}));
  };
  auto ln = [](const std::shared_ptr<Module>& norm, const Tensor& h) { return apply_norm(*norm, h, Tensor()); };
  Tensor h = add(x, gated(m[2], attn->forward(modulate(ln(norm1, x), m[0], m[1]), ctx.key_padding_mask)));
  std::size_t next = 3;
  if (config.cross_attention) {
    h = add(h, gated(m[5], cross_attn->forward_cross(modulate(ln(norm3, h), m[3], m[4]), ctx.memory,
                                                     ctx.memory_padding_mask)));
    next = 6;
  }
  return add(h, gated(m[next + 2], ffn->forward(modulate(ln(norm2, h), m[next], m[next + 1]))));
}

std::string TransformerBlock::extra_repr() const {
  return "placement=" + placement_name(config.placement) + ", norm=" + norm_kind_name(config.norm) +
         (config.causal ? ", causal" : "") + (config.cross_attention ? ", cross_attention" : "");
}

}  // namespace tapegrad::nn
