// mix_ln.cpp — Mix-LN (Li et al. 2024, "Mix-LN: Unleashing the Power of Deeper Layers by
// Combining Pre-LN and Post-LN", arXiv 2412.13795): Post-LN (post_ln.cpp) in the first ⌊ρL⌋
// blocks of a stack of L, Pre-LN (pre_ln.cpp) in the others.
//
//   block ℓ ≤ ⌊ρL⌋:  h = N1(x + Attn(x));   y = N2(h + FFN(h))
//   block ℓ > ⌊ρL⌋:  h = x + Attn(N1(x));   y = h + FFN(N2(h))
//   ρ = config.mix_ln_ratio, 0.25 by default (the paper's α: 25% up to 1B parameters)
//
// The paper finds Pre-LN's deep layers getting small gradients (they drift towards the
// identity) and Post-LN's early layers vanishing ones; Post-LN's norms in the few first blocks
// and Pre-LN's identity path through the many later ones give gradients of similar size at
// every depth. The Pre-LN blocks leave the stream unnormalized: the stack ends with a norm, as
// in the paper's LLaMA models. Each stack of a seq2seq model takes its own ⌊ρL⌋.
#include <cmath>

#include "../../autograd/ops.hpp"
#include "../transformer_block.hpp"
#include "placement.hpp"

namespace tapegrad::nn {

namespace {
class MixLN final : public PlacementFormula {
 public:
  explicit MixLN(bool post_ln) : post_ln_(post_ln) {}
  Tensor forward(const Tensor& x, const BlockSublayers& F) const override {
    if (post_ln_) {  // one of the first ⌊ρL⌋ blocks: Post-LN
      Tensor h = F.attn.N(x + F.attn(x));
      if (F.cross) h = F.cross.N(h + F.cross(h));
      return F.ffn.N(h + F.ffn(h));
    }
    Tensor h = x + F.attn(F.attn.N(x));  // a deeper block: Pre-LN
    if (F.cross) h = h + F.cross(F.cross.N(h));
    return h + F.ffn(F.ffn.N(h));
  }

 private:
  bool post_ln_;
};

// Block `stack.index` (0-based) is Post-LN when it is one of the first ⌊ρL⌋. (The 1e-9 keeps
// a product such as 0.29·100, 28.999... in binary, at the 29 it stands for.)
std::unique_ptr<PlacementFormula> make_mix_ln(const TransformerBlockConfig& config, const Stack& stack) {
  const double post_ln_blocks = std::floor(config.mix_ln_ratio * double(stack.layers()) + 1e-9);
  return std::make_unique<MixLN>(double(stack.index) < post_ln_blocks);
}
}  // namespace

PlacementInfo mix_ln_placement() {
  return {.name = "mixln",
          .label = "Mix-LN",
          .formula = "post's formula in blocks ℓ ≤ ⌊ρL⌋, pre's in the others; ρ = mix_ln_ratio (0.25); the stack ends with a norm",
          .paper = "Li et al. 2024",
          .final_norm = true,
          .mix_ln_ratio = true,
          .make = make_mix_ln};
}

}  // namespace tapegrad::nn
