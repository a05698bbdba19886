// value_residual.cpp — value residual learning (Zhou, Zhang, Chen, Jiang, Mo, Wang 2024, "Value
// Residual Learning For Alleviating Attention Concentration In Transformers", arXiv 2410.17897;
// reference code Zcchill/Value-Residual-Learning): every attention after the first attends
// over a mix of its own values and the first block's.
//
//   V_1 = N(x_0)·W_V^1                    the first block's values, kept in the stream
//   V_n ← λ1·V_1 + λ2·V_n   (n = 2..L)    λ1 = λ2 = 0.5 in the paper's ResFormer
//
// The stream carries V_1 from block 1 to every later block: the first block's token-level
// information reaches the deep attention without passing through every layer between, which
// the paper credits with less "attention concentration" and with ResFormer matching its
// baseline's loss on about 20% less data (claim 14 of the depth study). With learnable λ (the
// paper's Learnable-ResFormer), each block's λ1 and λ2 are parameters starting at the given
// values: stream.lambda1[n − 2] and stream.lambda2[n − 2].
//
// It reaches into the blocks' attention (BlockContext::values), so a block cannot be
// recomputed alone: activation checkpointing is refused with it.
#include "stream.hpp"

#include "../../autograd/ops.hpp"
#include "../transformer_block.hpp"

namespace tapegrad::nn {

namespace {

class ValueResidual final : public ResidualStream {
 public:
  explicit ValueResidual(const StreamBuild& b)
      : ResidualStream("ValueResidual"), lambda1_value_(b.stream.value_lambda1), lambda2_value_(b.stream.value_lambda2) {
    if (b.stream.value_lambda_learnable && b.n_layers > 1) {
      const std::int64_t n = b.n_layers - 1;  // blocks 2..L
      lambda1 = register_parameter("lambda1", full({n}, lambda1_value_, b.block.dtype));
      lambda2 = register_parameter("lambda2", full({n}, lambda2_value_, b.block.dtype));
    }
  }

  void run_block(StreamState& s, TransformerBlock& block, BlockContext& ctx, std::int64_t l) override {
    if (l == 0) {
      ctx.values = [&s](const Tensor& v) { return s.first_values = v; };  // V_1, as it is
    } else {
      ctx.values = [&s, this, l](const Tensor& v) {
        if (!lambda1.defined()) return add(mul(s.first_values, lambda1_value_), mul(v, lambda2_value_));
        return add(mul(s.first_values, narrow(lambda1, 0, l - 1, 1)), mul(v, narrow(lambda2, 0, l - 1, 1)));
      };
    }
    ResidualStream::run_block(s, block, ctx, l);
    ctx.values = nullptr;
  }

  bool reaches_into_blocks() const override { return true; }

  Tensor lambda1, lambda2;  // learnable λ only

 private:
  double lambda1_value_, lambda2_value_;
};

}  // namespace

StreamInfo value_residual_stream() {
  return {.name = "value_residual",
          .label = "value residual",
          .formula = "V_n ← λ1·V_1 + λ2·V_n in every attention after the first (λ1 = λ2 = 0.5, or learnable)",
          .paper = "Zhou et al. 2024 (ResFormer)",
          .value_settings = true,
          .make = [](const StreamBuild& b) { return std::make_shared<ValueResidual>(b); }};
}

}  // namespace tapegrad::nn
