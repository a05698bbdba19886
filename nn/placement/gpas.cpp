// gpas.cpp — GPAS, gradient-preserving activation scaling (Chen et al. 2025, "GPAS: Accelerating
// Convergence of LLM Pretraining via Gradient-Preserving Activation Scaling", arXiv 2506.22049;
// reference code dandingsky/GPAS), on Pre-LN: after each sublayer's residual add, the stream is
// scaled down in the forward pass while its gradient passes unscaled.
//
//   G(u) = u − SiLU(β)·sg(u)                      sg: stop-gradient (detach)
//   h = G(x + Attn(N1(x)));   y = G(h + FFN(N2(h)))    one gate β per block, 0 at init
//
// Why: in Pre-LN the stream's variance grows with depth, so each deep sublayer's update is
// small beside it and the deep blocks learn little (the "curse of depth"; LayerNorm Scaling,
// lns.cpp, attacks the same). Scaling the stream down by (1 − SiLU(β)) would also scale every
// gradient that flows back through it, vanishing with depth; G scales the value only:
// ∂G/∂u = I, and ∂G/∂β = −SiLU'(β)·u. At init SiLU(0) = 0: the block is Pre-LN's exactly.
// The reference code shares one β between the block's two sublayers (its GPASBlock runs after
// each add), and so does this unit (a cross-attention's add too).
#include "../../autograd/ops.hpp"
#include "placement.hpp"

namespace tapegrad::nn {

namespace {
Tensor gpas(const Tensor& u, const Tensor& beta) { return u - silu(beta) * u.detach(); }

class GPAS final : public PlacementFormula {
 public:
  Tensor forward(const Tensor& x, const BlockSublayers& F) const override {
    Tensor h = gpas(x + F.attn(F.attn.N(x)), F.gate);
    if (F.cross) h = gpas(h + F.cross(F.cross.N(h)), F.gate);
    return gpas(h + F.ffn(F.ffn.N(h)), F.gate);
  }
};
}  // namespace

PlacementInfo gpas_placement() {
  return {.name = "gpas",
          .label = "Pre-LN + GPAS",
          .formula = "h = G(x + Attn(N1(x))); y = G(h + FFN(N2(h))), G(u) = u − SiLU(β)·sg(u), β = 0 at init; a final norm",
          .paper = "Chen et al. 2025",
          .block_gate = true,
          .final_norm = true,
          .make = make_formula<GPAS>};
}

}  // namespace tapegrad::nn
