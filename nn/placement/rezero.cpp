// rezero.cpp — ReZero (Bachlechner et al. 2020, "ReZero is All You Need: Fast Convergence at
// Large Depth", arXiv 2003.04887): no norm; each sublayer enters the stream through a
// learnable scalar gate a, zero at init.
//
//   h = x + a1·Attn(x);   y = h + a2·FFN(h)
//
// At init every block is the identity (∂y/∂x = I at any depth); dL/da = ⟨dL/dy, F(x)⟩ is
// nonzero from the first step, so the gates open first and the sublayers learn behind them.
#include "../../autograd/ops.hpp"
#include "placement.hpp"

namespace tapegrad::nn {

namespace {
class ReZero final : public PlacementFormula {
 public:
  Tensor forward(const Tensor& x, const BlockSublayers& F) const override {
    Tensor h = x + F.attn(x) * F.attn.a();
    if (F.cross) h = h + F.cross(h) * F.cross.a();
    return h + F.ffn(h) * F.ffn.a();
  }
};
}  // namespace

PlacementInfo rezero_placement() {
  return {.name = "rezero",
          .label = "ReZero",
          .formula = "h = x + a1·Attn(x); y = h + a2·FFN(h); a = 0 at init, no norm",
          .paper = "Bachlechner et al. 2020",
          .norms = false,
          .rezero_gates = true,
          .make = make_formula<ReZero>};
}

}  // namespace tapegrad::nn
