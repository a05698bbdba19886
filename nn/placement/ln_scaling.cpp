// ln_scaling.cpp — LayerNorm Scaling (Sun et al. 2025, "The Curse of Depth in Large Language
// Models", arXiv 2502.05795): Pre-LN (pre_ln.cpp) with each norm's output multiplied by 1/√ℓ
// in block ℓ = 1..L of its stack.
//
//   h = x + Attn(N1(x)/√ℓ);   y = h + FFN(N2(h)/√ℓ)
//
// In Pre-LN the stream's variance grows with depth (exponentially, the paper argues), so a
// deep block's update is small next to the stream and the block is close to the identity:
// its layers learn little and can be pruned. Shrinking the updates of deeper blocks keeps the
// variance growth in check, and the deep blocks contribute. It adds no parameter. The paper
// advises against combining it with a depth-scaled initialization (weights that write into
// the stream drawn smaller in deep stacks: GPT-2's 1/√(2L), init gpt2 here; b2t_scaling): it
// replaces it. The stack ends with a norm, unscaled, as in Pre-LN.
#include <cmath>

#include "../../autograd/ops.hpp"
#include "placement.hpp"

namespace tapegrad::nn {

namespace {
class LayerNormScaling final : public PlacementFormula {
 public:
  explicit LayerNormScaling(std::int64_t l) : inv_sqrt_l_(1.0 / std::sqrt(double(l))) {}  // block ℓ = l
  Tensor forward(const Tensor& x, const BlockSublayers& F) const override {
    Tensor h = x + F.attn(F.attn.N(x) * inv_sqrt_l_);
    if (F.cross) h = h + F.cross(F.cross.N(h) * inv_sqrt_l_);
    return h + F.ffn(F.ffn.N(h) * inv_sqrt_l_);
  }

 private:
  double inv_sqrt_l_;  // 1/√ℓ
};

std::unique_ptr<PlacementFormula> make_ln_scaling(const TransformerBlockConfig&, const Stack& stack) {
  return std::make_unique<LayerNormScaling>(stack.index + 1);  // ℓ counts from 1
}
}  // namespace

PlacementInfo ln_scaling_placement() {
  return {.name = "lns",
          .label = "LayerNorm Scaling",
          .formula = "h = x + Attn(N1(x)/√ℓ); y = h + FFN(N2(h)/√ℓ) in block ℓ; the stack ends with a norm; the paper "
                     "advises against a scaled init (init gpt2's 1/√(2L))",
          .paper = "Sun et al. 2025",
          .final_norm = true,
          .make = make_ln_scaling};
}

}  // namespace tapegrad::nn
