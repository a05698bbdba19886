// hyper_connections.cpp — Hyper-Connections (Zhu et al. 2024, ByteDance Seed,
// "Hyper-Connections", arXiv 2409.19606; reference code lucidrains/hyper-connections): the
// widened stream of hyper_connections.hpp, with the paper's connection matrix per sublayer k
//
//   HC = ( 0    β_1 .. β_n )        A_m = α_{:,0}: H_pre_j  = α_{j,0}
//        ( α_{1,0} α_{1,1..n} )     A_r = α_{:,1:}: H_res_ij = α_{j,i}  (h' = A_rᵀ·H + Bᵀ·y)
//        ( ..               )       B   = β:        H_post_i = β_i
//
// Static HC (§2.2; Appendix J): α and β are learned, and start as Pre-LN's residual: A_m the
// one-hot of stream k mod n (each sublayer reads one copy, the layers taking turns), A_r the
// identity, β ones. Dynamic HC (DHC, §2.3) adds terms of the input, per copy j:
//
//   x̄_j = norm(x_j);   α_{j,:} += s_α·tanh(x̄_j·W_α);   β_j += s_β·tanh(x̄_j·w_β)
//
// with W_α, w_β zero and s_α = s_β = 0.01 at init, so DHC starts as static HC. The norm is a
// LayerNorm as in the paper (lucidrains uses an RMSNorm). With n = 1 at init both are the
// Pre-LN model exactly: h_in = 1·x, x ← 1·x + 1·F(N(x)), and the end sums one copy.
//
// The paper finds DHC with n = 4 reaching the baseline's loss faster (1.8x in its 7B MoE) and
// the representations of the copies less alike than Pre-LN's across depth ("seesaw" removed).
//
// The parameters, per sublayer k: stream.connections.k.static_alpha (n, 1 + n) and static_beta
// (n); with DHC also norm.weight, norm.bias, dynamic_alpha_fn (C, 1 + n), dynamic_alpha_scale,
// dynamic_beta_fn (C), dynamic_beta_scale: the names of the reference code.
#include "hyper_connections.hpp"

#include "../../autograd/ops.hpp"
#include "../containers.hpp"
#include "../norm.hpp"
#include "../transformer_block.hpp"

namespace tapegrad::nn {

WidenedStream::WidenedStream(std::string name, const StreamBuild& b) : ResidualStream(name), n_(b.stream.hc_rate) {
  const std::string scheme = b.stream.scheme.name;
  if (b.block.placement != Placement::pre)
    throw ValueError(scheme + " joins each sublayer to the stream itself, Pre-LN-style (x_i ← Σ_j H_res_ij·x_j + "
                     "H_post_i·F(N(h_in))): placement must be pre, got " + b.block.placement.name);
  if (b.block.residual_scale != 1.0)
    throw ValueError(scheme + " scales the residual with its own H_res: leave residual_scale at 1, got " +
                     number_str(b.block.residual_scale));
  if (b.block.cross_attention)
    throw ValueError(scheme + " joins self-attention and FFN sublayers only, not cross-attention");
}

StreamState WidenedStream::begin(const Tensor& h0) {
  Shape shape = h0.shape();
  shape.insert(shape.end() - 1, n_);  // (B, T, n, C)
  StreamState s;
  s.x = contiguous(expand(unsqueeze(h0, h0.dim() - 1), shape));
  return s;
}

Tensor WidenedStream::apply(const Tensor& x, const HyperConnection& H, const Sublayer& F) {
  const Tensor h_in = squeeze(matmul(unsqueeze(H.pre, H.pre.dim() - 1), x), x.dim() - 2);  // (1, n)·(n, C): (B, T, C)
  const Tensor y = F(F.N(h_in));
  return matmul(H.res, x) + unsqueeze(H.post, H.post.dim()) * unsqueeze(y, y.dim() - 1);  // (n, n)·(n, C) + (n, 1)·(1, C)
}

void WidenedStream::run_block(StreamState& s, TransformerBlock& block, BlockContext& ctx, std::int64_t l) {
  ctx.formula = [this, l](const Tensor& x, const BlockSublayers& F) {
    const Tensor h = apply(x, connect(2 * l, x), F.attn);
    return apply(h, connect(2 * l + 1, h), F.ffn);
  };
  s.x = block.forward(s.x, ctx);
  ctx.formula = nullptr;
}

Tensor WidenedStream::readout(const StreamState& s) const { return sum(s.x, {s.x.dim() - 2}); }

Tensor WidenedStream::end(StreamState& s) { return readout(s); }

namespace {

// One sublayer's α and β, and DHC's terms.
class HyperConnectionWeights final : public Module {
 public:
  HyperConnectionWeights(std::int64_t n, std::int64_t k, bool dynamic, const TransformerBlockConfig& c)
      : Module("HyperConnection") {
    std::vector<double> alpha(static_cast<std::size_t>(n * (1 + n)), 0.0);
    for (std::int64_t j = 0; j < n; ++j) alpha[static_cast<std::size_t>(j * (1 + n) + 1 + j)] = 1.0;  // A_r = I
    alpha[static_cast<std::size_t>((k % n) * (1 + n))] = 1.0;                                         // A_m = e_{k mod n}
    static_alpha = register_parameter("static_alpha", tensor(alpha, {n, 1 + n}, c.dtype));
    static_beta = register_parameter("static_beta", full({n}, 1.0, c.dtype));
    if (!dynamic) return;
    norm = register_module("norm", std::make_shared<LayerNorm>(NormOptions(c.d_model).eps(c.norm_eps).dtype(c.dtype)));
    dynamic_alpha_fn = register_parameter("dynamic_alpha_fn", zeros({c.d_model, 1 + n}, c.dtype));
    dynamic_alpha_scale = register_parameter("dynamic_alpha_scale", full({}, 0.01, c.dtype));
    dynamic_beta_fn = register_parameter("dynamic_beta_fn", zeros({c.d_model}, c.dtype));
    dynamic_beta_scale = register_parameter("dynamic_beta_scale", full({}, 0.01, c.dtype));
  }
  Tensor static_alpha, static_beta, dynamic_alpha_fn, dynamic_alpha_scale, dynamic_beta_fn, dynamic_beta_scale;
  std::shared_ptr<LayerNorm> norm;
};

class HyperConnections final : public WidenedStream {
 public:
  explicit HyperConnections(const StreamBuild& b) : WidenedStream("HyperConnections", b) {
    connections_ = register_module("connections", std::make_shared<ModuleList>());
    for (std::int64_t k = 0; k < 2 * b.n_layers; ++k)
      connections_->push_back(std::make_shared<HyperConnectionWeights>(n_, k, b.stream.hc_dynamic, b.block));
  }

 protected:
  HyperConnection connect(std::int64_t k, const Tensor& x) override {
    const auto& w = static_cast<HyperConnectionWeights&>(*(*connections_)[static_cast<std::size_t>(k)]);
    Tensor alpha = w.static_alpha, beta = w.static_beta;  // (n, 1 + n), (n)
    if (w.norm) {  // DHC: per copy j, from its norm
      const Tensor normed = w.norm->forward(x);  // (B, T, n, C)
      alpha = alpha + tanh(matmul(normed, w.dynamic_alpha_fn)) * w.dynamic_alpha_scale;  // (B, T, n, 1 + n)
      beta = beta + tanh(matmul(normed, w.dynamic_beta_fn)) * w.dynamic_beta_scale;      // (B, T, n)
    }
    const std::int64_t last = alpha.dim() - 1;
    return {.pre = squeeze(narrow(alpha, last, 0, 1), last),
            .res = transpose(narrow(alpha, last, 1, n_), last - 1, last),  // H_res = A_rᵀ
            .post = beta};
  }

 private:
  std::shared_ptr<ModuleList> connections_;  // [k]: sublayer k's, attention 2l and FFN 2l + 1
};

}  // namespace

StreamInfo hyper_connections_stream() {
  return {.name = "hyper_connections",
          .label = "Hyper-Connections",
          .formula = "n copies; each sublayer: x_i ← Σ_j H_res_ij·x_j + H_post_i·F(N(Σ_j H_pre_j·x_j)), learned "
                     "(static, or + tanh terms of the input: DHC); the head reads Σ_i x_i",
          .paper = "Zhu et al. 2024",
          .hc_settings = true,
          .make = [](const StreamBuild& b) { return std::make_shared<HyperConnections>(b); }};
}

}  // namespace tapegrad::nn
