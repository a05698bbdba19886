// residual.hpp — Residual: what joins one sublayer F (attention, FFN) to the residual stream.
//
// A TransformerBlock holds one per sublayer, registered as attn_residual, cross_residual and
// ffn_residual: the norm N of that sublayer (null when the placement has none, as ReZero),
// the residual scale α, ReZero's learnable gate a, and a second norm N_out on the sublayer's
// output for the placements that have one (Peri-LN), and nGPT's eigen learning rates α, a
// vector over d_model (nn/ngpt.hpp). It holds the pieces only; the formula
// that joins them (N(x + F(x)), x + F(N(x)), x + N_out(F(N(x))), ...) is the block's placement
// (nn/placement/). Keeping the pieces here keeps their names in state dicts, and PyTorch's:
//   blocks.3.attn_residual.norm.weight, blocks.3.attn_residual.norm_out.weight,
//   blocks.3.ffn_residual.scale, blocks.3.attn_residual.eigen_lr
#pragma once

#include <memory>

#include "ngpt.hpp"
#include "norm.hpp"

namespace tapegrad::nn {

class Residual : public Module {
 public:
  // norm: may be null. rezero_gate: registers `scale`, the 0-d gate a, zero at init.
  // norm_out: the output norm, registered as `norm_out` after `norm`; null for most placements.
  // eigen_dim > 0: registers `eigen_lr`, nGPT's α over eigen_dim (= d_model) dims, stored
  // scaled (ngpt_eigen_lr: s̃ = 1/√d_model at init, α = 0.05).
  Residual(std::shared_ptr<Norm> norm, double alpha = 1.0, bool rezero_gate = false, DType dtype = DType::float32,
           std::shared_ptr<Norm> norm_out = nullptr, std::int64_t eigen_dim = 0);
  std::string extra_repr() const override;

  std::shared_ptr<Norm> norm;      // N (Peri-LN's input norm N_in)
  std::shared_ptr<Norm> norm_out;  // N_out, on the sublayer's output (Peri-LN); null otherwise
  double alpha = 1.0;          // α: the residual scale of the placements that use one (post, pre, deepnorm)
  double branch = 1.0;         // m: the depth parametrization's multiplier of the update (Depth-μP, CompleteP)
  Tensor scale;                // ReZero's a (0-d parameter), undefined otherwise
  Tensor eigen_lr;             // nGPT's s̃ of α (d_model), undefined otherwise
  ScaledVector eigen_lr_scaling{1.0, 1.0};  // α = |factor·s̃| (NVIDIA/ngpt takes the absolute value)
};

}  // namespace tapegrad::nn
