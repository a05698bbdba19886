// attention_residuals.cpp — Attention Residuals (Kimi Team 2026, "Attention Residuals", arXiv
// 2603.15031; official repository MoonshotAI/Attention-Residuals, whose README gives the
// method as PyTorch-style pseudocode): each sublayer reads a softmax attention over the depth
// instead of the running residual sum.
//
//   h_k = Σ_{i<k} α_{i→k}·v_i      v_0 = the embedding, v_i = the i-th sublayer's output f_i(N(h_i))
//   α_{i→k} = softmax_i(w_kᵀ·RMSNorm_k(v_i))
//
// "Layer" is each sublayer: the attention and the FFN of a block each have their own query w_k
// (the paper's L counts both; the official code has an attn_res_proj and an mlp_res_proj per
// block), and the output has one more, over all 2L + 1 values, before the final norm and the
// head. w_k (d_model) is a learned pseudo-query, not computed from h: zero at init, so each
// h_k starts as the plain average of what was written before it. RMSNorm_k is an RMSNorm with
// its own gain (the official code's attn_res_norm), so large outputs do not outvote small ones.
// The sublayers stay Pre-LN inside: f(N(h)) with the block's norms; only the residual sum is
// replaced, hence the pre placement only.
//
// Block AttnRes (§3.2): the sublayers in blocks of S (attnres_block_size), the values of a
// block summed as a plain residual (b_n = Σ_{i∈block n} v_i) and the attention over the block
// sums b_0 = the embedding, b_1, .., plus the current block's partial sum when it has begun.
// S = 1 is Full AttnRes. The paper finds about 8 blocks recover most of the full method's gain
// with O(N·d) memory instead of O(L·d), and Block AttnRes matching the loss of a Pre-LN baseline
// trained with 1.25x the compute.
//
// The parameters: stream.depth.k.query (w_k) and stream.depth.k.norm.weight, k = 0 .. 2L
// (k = 2l the attention of block l, 2l + 1 its FFN, 2L the output). A block's forward maps what
// its attention reads to what the next block's attention reads (the output's h after the last),
// so the stream hooks and the blocks' hooks see the inputs of the attention sublayers.
#include "stream.hpp"

#include "../../autograd/ops.hpp"
#include "../containers.hpp"
#include "../norm.hpp"
#include "../transformer_block.hpp"

namespace tapegrad::nn {

namespace {

// One softmax over the depth: a pseudo-query and the RMSNorm of its keys.
class DepthAttention final : public Module {
 public:
  DepthAttention(std::int64_t C, double eps, DType dtype) : Module("DepthAttention") {
    query = register_parameter("query", zeros({C}, dtype));  // zero: a uniform average at init
    norm = register_module("norm", std::make_shared<RMSNorm>(NormOptions(C).eps(eps).dtype(dtype)));
  }
  // sources: N tensors (B, T, C) -> Σ_i α_i·v_i (B, T, C)
  Tensor forward(const std::vector<Tensor>& sources) {
    const std::int64_t C = query.size(0);
    const Tensor V = stack(sources, 0);                           // (N, B, T, C); keys = values
    const Tensor logits = matmul(norm->forward(V), reshape(query, {C, 1}));  // (N, B, T, 1) = w·RMSNorm(v_i)
    return sum(mul(softmax(logits, 0), V), {0});                  // (B, T, C)
  }
  Tensor query;  // w: (C)
  std::shared_ptr<RMSNorm> norm;
};

class AttentionResiduals final : public ResidualStream {
 public:
  explicit AttentionResiduals(const StreamBuild& b) : ResidualStream("AttentionResiduals"), S_(b.stream.attnres_block_size) {
    if (b.block.placement != Placement::pre)
      throw ValueError("attention_residuals: the paper's sublayers are Pre-LN, f(N(h)), and the scheme replaces the "
                       "residual sum itself; placement must be pre, got " + b.block.placement.name);
    if (b.block.residual_scale != 1.0)
      throw ValueError("attention_residuals: residual_scale = " + number_str(b.block.residual_scale) +
                       " scales a residual sum that the scheme replaces by an attention over the depth; leave it at 1");
    depth_ = register_module("depth", std::make_shared<ModuleList>());
    for (std::int64_t k = 0; k <= 2 * b.n_layers; ++k)
      depth_->push_back(std::make_shared<DepthAttention>(b.block.d_model, b.block.norm_eps, b.block.dtype));
  }

  StreamState begin(const Tensor& h0) override {
    StreamState s = ResidualStream::begin(h0);
    s.outputs = {h0};  // b_0 = v_0: the embedding
    s.x = read(s, 0);  // h_0 = h0: one source, weight 1
    return s;
  }

  void run_block(StreamState& s, TransformerBlock& block, BlockContext& ctx, std::int64_t l) override {
    ctx.formula = [&s, this, l](const Tensor& h, const BlockSublayers& F) {
      write(s, F.attn(F.attn.N(h)), 2 * l);
      write(s, F.ffn(F.ffn.N(read(s, 2 * l + 1))), 2 * l + 1);
      return read(s, 2 * l + 2);  // what the next attention (or the output) reads
    };
    s.x = block.forward(s.x, ctx);
    ctx.formula = nullptr;
  }

  // The blocks run the scheme's formula: one recomputed alone would lose the values it shares.
  bool reaches_into_blocks() const override { return true; }

 private:
  // h_k: the attention of query k over the completed block sums and the current partial sum.
  Tensor read(const StreamState& s, std::int64_t k) {
    std::vector<Tensor> sources = s.outputs;
    if (s.block_sum.defined()) sources.push_back(s.block_sum);
    return static_cast<DepthAttention&>(*(*depth_)[static_cast<std::size_t>(k)]).forward(sources);
  }
  // v_k joins its block's sum, which becomes a source of its own when the block is complete.
  void write(StreamState& s, const Tensor& v, std::int64_t k) const {
    s.block_sum = s.block_sum.defined() ? add(s.block_sum, v) : v;
    if ((k + 1) % S_ != 0) return;
    s.outputs.push_back(s.block_sum);
    s.block_sum = Tensor();
  }

  std::int64_t S_;  // sublayers per block; 1: Full AttnRes
  std::shared_ptr<ModuleList> depth_;
};

}  // namespace

StreamInfo attention_residuals_stream() {
  return {.name = "attention_residuals",
          .label = "AttnRes",
          .formula = "each sublayer reads h_k = Σ_{i<k} softmax_i(w_k·RMSNorm(v_i))·v_i over the embedding and the "
                     "sublayer outputs v_i (w_k = 0 at init: their mean); blocks of attnres_block_size summed first",
          .paper = "Kimi Team 2026 (Attention Residuals)",
          .attnres_settings = true,
          .make = [](const StreamBuild& b) { return std::make_shared<AttentionResiduals>(b); }};
}

}  // namespace tapegrad::nn
