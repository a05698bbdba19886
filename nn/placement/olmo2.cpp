// olmo2.cpp — OLMo 2's reordered norm (Team OLMo 2024, "2 OLMo 2 Furious", arXiv 2501.00656):
// the norm moves from the sublayer's input (Pre-LN) to its output, inside the residual branch.
//
//   h = x + N1(Attn(x));   y = h + N2(FFN(h))
//
// The stream stays outside every norm, so the identity path from the output to every block is
// Pre-LN's, and each update enters it normalized (Peri-LN's output norm, peri_ln.cpp, without
// the input norm): its size is set by the norm's gain, not by what the sublayer computed.
// The sublayers read the raw stream, whose scale grows with depth; OLMo 2 pairs the placement
// with QK-norm in attention (an attention setting) and with RMSNorm. The stream is never
// normalized in a block: the stack ends with a norm, as OLMo 2's does.
#include "../../autograd/ops.hpp"
#include "placement.hpp"

namespace tapegrad::nn {

namespace {
class OLMo2 final : public PlacementFormula {
 public:
  Tensor forward(const Tensor& x, const BlockSublayers& F) const override {
    Tensor h = x + F.attn.N(F.attn(x));
    if (F.cross) h = h + F.cross.N(F.cross(h));
    return h + F.ffn.N(F.ffn(h));
  }
};
}  // namespace

PlacementInfo olmo2_placement() {
  return {.name = "olmo2",
          .label = "OLMo 2",
          .formula = "h = x + N1(Attn(x)); y = h + N2(FFN(h)); the stack ends with a norm (reordered norm)",
          .paper = "Team OLMo 2024 (2 OLMo 2 Furious)",
          .final_norm = true,
          .branch_multiplier = false,  // its updates pass a norm before they join the stream
          .make = make_formula<OLMo2>};
}

}  // namespace tapegrad::nn
