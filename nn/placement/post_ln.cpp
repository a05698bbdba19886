// post_ln.cpp — Post-LN, the original Transformer's placement (Vaswani et al. 2017,
// "Attention Is All You Need", arXiv 1706.03762; BERT): the norm comes after each residual sum.
//
//   h = N1(α·x + Attn(x));   y = N2(α·h + FFN(h))        (α = 1 unless residual_scale is set)
//
// Every path from the output down to the input runs through a norm per sublayer, whose
// Jacobian divides by the stream's RMS: deep Post-LN stacks can get vanishing gradients at
// the bottom (Xiong et al. 2020), which is why they need warm-up.
#include "../../autograd/ops.hpp"
#include "placement.hpp"

namespace tapegrad::nn {

namespace {
class PostLN final : public PlacementFormula {
 public:
  Tensor forward(const Tensor& x, const BlockSublayers& F) const override {
    Tensor h = F.attn.N(F.attn.alpha_x(x) + F.attn(x));
    if (F.cross) h = F.cross.N(F.cross.alpha_x(h) + F.cross(h));
    return F.ffn.N(F.ffn.alpha_x(h) + F.ffn(h));
  }
};
}  // namespace

PlacementInfo post_ln_placement() {
  return {.name = "post",
          .label = "Post-LN",
          .formula = "h = N1(α·x + Attn(x)); y = N2(α·h + FFN(h))",
          .paper = "Vaswani et al. 2017",
          .residual_scale = true,
          .make = make_formula<PostLN>};
}

}  // namespace tapegrad::nn
