// variants.hpp — the ways of joining sublayers to the residual stream that the depth study
// compares, each under a command-line name. A variant is a placement, a norm kind, a residual
// scale α and whether the blocks' weights are scaled at init. The variants are
//
//   every placement of the registry (nn/placement/placement.hpp: post, pre, b2t, deepnorm,
//   rezero, none, and any placement added there), with its name, label and formula (nGPT's
//   with LLaMA's blocks, which it requires, and its renormalization after every step: runs.cpp);
//
//   and the study's own, each derived from a registered placement:
//     b2t-scaled    b2t with every Linear weight of the blocks × L^-½ at init (b2t_scaling, nn/model_init.hpp)
//     pre-rmsnorm   pre with N = RMSNorm          post-rmsnorm  post with N = RMSNorm
//     pre-scaled    pre with α = 1/√2             post-scaled   post with α = 1/√2
//     llama         pre with N = RMSNorm, a SwiGLU FFN, rotary positions and no biases
//                   (Touvron et al. 2023; nn::llama_config)
//     dyt, derf     pre with N = DyT γ⊙tanh(αx)+β, or Derf γ⊙erf(αx+s)+β (nn/norm_kind.hpp),
//                   and the papers' learned embedding scale from √d_model
//     value-residual, denseformer, hc, mhc, attnres
//                   pre on another stream scheme (nn/stream/): value residual, DenseFormer,
//                   Hyper-Connections, mHC (n = 4 copies), Attention Residuals (Full)
//     depth-mup, completep
//                   pre under a depth parametrization: every update × (2/L)^α, α = ½ or 1,
//                   and Adam's lr and ε scaled to match (optim::depth_scaled_groups), so
//                   that a learning rate tuned at 2 blocks should hold at L
#pragma once

#include <string>
#include <vector>

#include <tapegrad/tapegrad.hpp>

namespace depth_study {

struct Variant {
  std::string name;     // on the command line and in the CSV files: "post"
  std::string label;    // in tables and chart legends: "Post-LN"
  std::string formula;  // one line, for --help and the report
  tapegrad::nn::Placement placement = tapegrad::nn::Placement::pre;
  tapegrad::nn::NormKind norm = tapegrad::nn::NormKind::layernorm;
  double residual_scale = 1.0;
  bool b2t_scaling = false;  // the blocks' Linear weights × L^(-1/2) at init
  bool llama = false;        // SwiGLU FFN of LLaMA's width, RoPE instead of a position table, no biases
  tapegrad::nn::StreamConfig stream;  // how the blocks join across the depth: the plain stream unless set
  // The depth parametrization (TransformerBlockConfig::branch_depth_exponent): each update ×
  // (branch_base_depth / L)^branch_exponent, with the optimizer's lr and ε to match; 0: none.
  double branch_exponent = 0;
  std::int64_t branch_base_depth = 2;
  // The token embeddings × a learned scalar that starts at √d_model (TransformerLMConfig::
  // embed_scale): DyT's and Derf's papers add it to their language models, whose norms no
  // longer bring the embeddings (std 0.02) to order 1 (docs/residuals.md shows them stall
  // without it).
  bool embed_scale_sqrt_d = false;
};

// The registered placements, in the registry's order, then the derived variants.
const std::vector<Variant>& all_variants();
// Their names, for --placements.
std::vector<std::string> variant_names();
// Throws std::invalid_argument naming the unknown name and the valid ones.
const Variant& variant_from_name(const std::string& name);
// --help's list: nn::placement_help() (a line per registered placement), then a line per
// derived variant, "  b2t-scaled    b2t with ...: h = N1(x + Attn(x)); ...".
std::string variant_help();

}  // namespace depth_study
