// b2t.cpp — B2T, the "bottom-to-top" connection (Takase et al. 2022, "B2T Connection:
// Serving Stability and Performance in Deep Transformers", arXiv 2206.00330): Post-LN whose
// last norm also receives the block's input.
//
//   h = N1(x + Attn(x));   y = N2(h + FFN(h) + x)
//   decoder:  h1 = N1(x + Attn(x)),  h2 = N3(h1 + Cross(h1)),  y = N2(h2 + FFN(h2) + x)
//
// The "+ x" skips every norm of the block but the last, so the gradient reaching the bottom
// of a deep stack crosses one norm per block instead of one per sublayer, while the output
// keeps Post-LN's normalized stream. Its residual sums are plain: α does not apply.
#include "../../autograd/ops.hpp"
#include "placement.hpp"

namespace tapegrad::nn {

namespace {
class B2T final : public PlacementFormula {
 public:
  Tensor forward(const Tensor& x, const BlockSublayers& F) const override {
    Tensor h = F.attn.N(x + F.attn(x));
    if (F.cross) h = F.cross.N(h + F.cross(h));
    return F.ffn.N(h + F.ffn(h) + x);
  }
};
}  // namespace

PlacementInfo b2t_placement() {
  return {.name = "b2t",
          .label = "B2T",
          .formula = "h = N1(x + Attn(x)); y = N2(h + FFN(h) + x)",
          .paper = "Takase et al. 2022",
          .make = make_formula<B2T>};
}

}  // namespace tapegrad::nn
