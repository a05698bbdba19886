// pre_ln.cpp — Pre-LN, GPT-2's placement (Radford et al. 2019; analysed by Xiong et al. 2020,
// "On Layer Normalization in the Transformer Architecture", arXiv 2002.04745): the norm comes
// before each sublayer, and the residual sum stays outside every norm.
//
//   h = α·x + Attn(N1(x));   y = α·h + FFN(N2(h))        (α = 1 unless residual_scale is set)
//
// The stream x → y → ... is never normalized, so a stack of them ends with one more norm
// (the model's final_norm) before the output layer. With α = 1 the identity path from the
// output to every block is direct: ∂x_L/∂x_l = I + (sum of the sublayers' Jacobians).
// With AdaLN-Zero norms each update is gated (DiT): h = x + g1 ⊙ Attn(N1(x)), gates zero at init.
#include "../../autograd/ops.hpp"
#include "placement.hpp"

namespace tapegrad::nn {

namespace {
class PreLN final : public PlacementFormula {
 public:
  Tensor forward(const Tensor& x, const BlockSublayers& F) const override {
    Tensor h = F.attn.alpha_x(x) + F.attn(F.attn.N(x));
    if (F.cross) h = F.cross.alpha_x(h) + F.cross(F.cross.N(h));
    return F.ffn.alpha_x(h) + F.ffn(F.ffn.N(h));
  }
};
}  // namespace

PlacementInfo pre_ln_placement() {
  return {.name = "pre",
          .label = "Pre-LN",
          .formula = "h = α·x + Attn(N1(x)); y = α·h + FFN(N2(h)); the stack ends with a norm",
          .paper = "Xiong et al. 2020",
          .final_norm = true,
          .residual_scale = true,
          .block_modulation = true,  // AdaLN-Zero's gated updates: h = x + g ⊙ F(N(x))
          .make = make_formula<PreLN>};
}

}  // namespace tapegrad::nn
