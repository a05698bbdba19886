// peri_ln.cpp — Peri-LN, or Sandwich-LN: Pre-LN with a second norm on each sublayer's output,
// so the sublayer is wrapped in norms on both sides (Ding et al. 2021, "CogView: Mastering
// Text-to-Image Generation via Transformers", arXiv 2105.13290, who call it Sandwich-LN; Kim et
// al. 2025, "Peri-LN: Revisiting Layer Normalization in the Transformer Architecture", arXiv
// 2502.02732; Gemma 2's blocks).
//
//   h = x + N1_out(Attn(N1(x)));   y = h + N2_out(FFN(N2(h)))
//
// The stream stays outside every norm, as in Pre-LN, so the identity path from the output to
// every block is kept; but each update enters it normalized, its size set by the output norm's
// gain and not by what the sublayer computed, so the stream's variance grows by about the same
// amount per sublayer instead of by whatever a sublayer's output has grown to ("massive
// activations"), and the gradient a large branch sends back is divided by its size.
// The stream is still not normalized: the stack ends with a norm, as in the Peri-LN paper.
// (The paper's optional norm of the embeddings is not part of the placement.)
#include "../../autograd/ops.hpp"
#include "placement.hpp"

namespace tapegrad::nn {

namespace {
class PeriLN final : public PlacementFormula {
 public:
  Tensor forward(const Tensor& x, const BlockSublayers& F) const override {
    Tensor h = x + F.attn.N_out(F.attn(F.attn.N(x)));
    if (F.cross) h = h + F.cross.N_out(F.cross(F.cross.N(h)));
    return h + F.ffn.N_out(F.ffn(F.ffn.N(h)));
  }
};
}  // namespace

PlacementInfo peri_ln_placement() {
  return {.name = "peri",
          .label = "Peri-LN",
          .formula = "h = x + N1_out(Attn(N1(x))); y = h + N2_out(FFN(N2(h))); the stack ends with a norm (Sandwich-LN)",
          .paper = "Ding et al. 2021 (CogView); Kim et al. 2025",
          .output_norms = true,
          .final_norm = true,
          .branch_multiplier = false,  // its updates pass a norm before they join the stream
          .make = make_formula<PeriLN>};
}

}  // namespace tapegrad::nn
