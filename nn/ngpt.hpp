// ngpt.hpp — what nGPT's modules share (Loshchilov, Hsieh, Sun, Ginsburg 2024, "nGPT:
// Normalized Transformer with Representation Learning on the Hypersphere", arXiv 2410.01131):
// the normalization Norm(x) = x / ‖x‖, the scaled parametrization of its learned vectors, and
// the renormalization of every matrix to unit vectors along d_model after each optimizer step.
//
// The placement (nn/placement/ngpt.cpp) has the block's formula; MultiHeadAttention (s_qk),
// FeedForward (s_u, s_v), Residual (α, the eigen learning rates) and TransformerLM (s_z, no
// final norm) hold the rest, each switched on by the placement. docs/residuals.md has the
// paper's claims. A model of that placement is built with unit weights; train it with
//
//   optim::AdamW opt(...);
//   optim::register_ngpt_normalization(opt, *model);   // after every step: unit rows again
// (optim/ngpt_normalization.hpp: the optimizer's layer sits above this one).
#pragma once

#include <cmath>

#include "module.hpp"

namespace tapegrad::nn {

// Norm(x) = x / ‖x‖₂ over the last dim: no gain and no ε, as the paper's (and its code's
// justnorm). x: (..., C) -> (..., C), every row of unit length.
Tensor unit_norm(const Tensor& x);

// A learned vector s in nGPT's scaled parametrization (the paper's section 2.6): stored as s̃,
// which starts at `scale`, and used as s = (init / scale)·s̃, so s starts at `init` while Adam
// moves s̃ at the pace that `scale` sets (s̃ of order 1/√d_model moves as fast, relative to
// itself, as the unit-length rows of the matrices).
struct ScaledVector {
  double init;   // s at init
  double scale;  // s̃ at init
  double factor() const { return init / scale; }  // s = factor·s̃
};
// The paper's values (and NVIDIA/ngpt's), d_model = C:
//   α_A, α_M   the eigen learning rates          0.05 at init, s̃ = 1/√C
//   s_qk       the query and key scale            1 at init,   s̃ = 1/√C
//   s_u, s_v   the MLP's two hidden scales        1 at init,   s̃ = 1 (v then times √C)
//   s_z        the logits' scale                  1 at init,   s̃ = 1/√C
// NVIDIA/ngpt fixes s̃ to 1/√1024 whatever the width (its config's base_scale); tapegrad uses
// 1/√C as the paper's text does, the same at its width 1024.
inline ScaledVector ngpt_eigen_lr(std::int64_t C) { return {0.05, 1.0 / std::sqrt(static_cast<double>(C))}; }
inline ScaledVector ngpt_s_qk(std::int64_t C) { return {1.0, 1.0 / std::sqrt(static_cast<double>(C))}; }
inline ScaledVector ngpt_s_uv() { return {1.0, 1.0}; }
inline ScaledVector ngpt_s_z(std::int64_t C) { return {1.0, 1.0 / std::sqrt(static_cast<double>(C))}; }

// Normalizes, in place and without recording, every matrix of model that reads from or writes
// to the d_model-wide stream, to unit vectors along d_model (NVIDIA/ngpt's normalize_matrices):
//   rows     of what reads the stream: token embeddings and the LM head (V, C), attention's
//            qkv / q_proj / kv_proj (·, C), the MLP's fc1 and fc_gate (hidden, C)
//   columns  of what writes it: attention's out_proj (C, C), the MLP's fc2 (C, hidden)
// Every module of model's tree is visited (a TransformerLM, a block, one attention); other
// parameters (biases, norms, the scale vectors) are left as they are.
void ngpt_normalize_weights(Module& model);

}  // namespace tapegrad::nn
