// no_residual.cpp — no residual connection at all: each sublayer's output, normalized,
// replaces the stream. Not a placement anyone trains deep models with; it is here to show
// what the residual connections of the others are for (He et al. 2016's argument, measured
// by examples/studies/depth_study).
//
//   h = N1(Attn(x));   y = N2(FFN(h))
//
// Every path from the output to the input runs through every sublayer's Jacobian: the
// gradient reaching the bottom of a deep stack shrinks (or grows) geometrically with depth.
#include "../../autograd/ops.hpp"
#include "placement.hpp"

namespace tapegrad::nn {

namespace {
class NoResidual final : public PlacementFormula {
 public:
  Tensor forward(const Tensor& x, const BlockSublayers& F) const override {
    Tensor h = F.attn.N(F.attn(x));
    if (F.cross) h = F.cross.N(F.cross(h));
    return F.ffn.N(F.ffn(h));
  }
};
}  // namespace

PlacementInfo no_residual_placement() {
  return {.name = "none",
          .label = "No residual",
          .formula = "h = N1(Attn(x)); y = N2(FFN(h)): no residual connection",
          .paper = "He et al. 2016 (what residuals fix)",
          .branch_multiplier = false,  // its updates pass a norm before they join the stream
          .make = make_formula<NoResidual>};
}

}  // namespace tapegrad::nn
