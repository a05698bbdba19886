// ngpt.cpp — nGPT, the normalized transformer (Loshchilov, Hsieh, Sun, Ginsburg 2024, "nGPT:
// Normalized Transformer with Representation Learning on the Hypersphere", arXiv 2410.01131):
// the stream lives on the unit sphere, and each sublayer moves it a learned step towards the
// sublayer's own (normalized) suggestion, per dimension:
//
//   h_A = Norm(Attn(x));   h = Norm(x̂ + α_A ⊙ (h_A − x̂))       x̂ = Norm(x)
//   h_M = Norm(MLP(h));    y = Norm(h + α_M ⊙ (h_M − h))
//
// Norm(x) = x / ‖x‖ (no gain, no ε: nn/ngpt.hpp); α_A, α_M are the eigen learning rates (one
// per dimension, in each Residual, 0.05 at init); no norm sits before a sublayer and the stack
// ends with none. x̂ = Norm(x) is the stream itself for every block but the first, which
// reads the token embeddings: their rows are unit vectors, but their gradient is projected on
// the sphere only through x̂ (NVIDIA/ngpt's A_norm = justnorm(h), "normally not needed").
// The sublayers read x as it comes, as there. The block's other parts (s_qk and the √D
// softmax scale, s_u and s_v, s_z and the unit weight rows) are switched on by `hypersphere`.
#include "../../autograd/ops.hpp"
#include "../ngpt.hpp"
#include "placement.hpp"

namespace tapegrad::nn {

namespace {
class NGPT final : public PlacementFormula {
 public:
  Tensor forward(const Tensor& x, const BlockSublayers& F) const override {
    const Tensor x_hat = unit_norm(x);
    const Tensor h_A = unit_norm(F.attn(x));
    const Tensor h = unit_norm(x_hat + F.attn.eigen_lr() * (h_A - x_hat));
    const Tensor h_M = unit_norm(F.ffn(h));
    return unit_norm(h + F.ffn.eigen_lr() * (h_M - h));
  }
};
}  // namespace

PlacementInfo ngpt_placement() {
  return {.name = "ngpt",
          .label = "nGPT",
          .formula = "h = Norm(x + α_A ⊙ (Norm(Attn(x)) − x)); y = Norm(h + α_M ⊙ (Norm(MLP(h)) − h)); unit weights",
          .paper = "Loshchilov et al. 2024",
          .norms = false,
          .hypersphere = true,
          .branch_multiplier = false,  // Norm(F(x)) would undo m
          .make = make_formula<NGPT>};
}

}  // namespace tapegrad::nn
