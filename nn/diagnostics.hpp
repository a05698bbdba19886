// diagnostics.hpp — the questions users of this field ask of a deep transformer:
// do gradients vanish or explode toward the bottom layers? Do layers collapse (consecutive
// outputs nearly identical)? How much does each sublayer write into the residual stream?
#pragma once

#include <string>
#include <vector>

#include "containers.hpp"
#include "module.hpp"

namespace tapegrad::nn {

struct ParameterNorms {
  std::string name;
  double grad_norm = 0;   // ‖∇p‖₂ (0 when the parameter has no gradient)
  double param_norm = 0;  // ‖p‖₂
};
// Every named parameter's gradient and value norms, after backward.
std::vector<ParameterNorms> parameter_norms(const Module& module);
// The global gradient norm N = (Σ over all parameters and elements |g|^p)^(1/p) (p = 2: the
// L2 norm; p = inf: max |g|), the one optim::clip_grad_norm_ measures and clips. Parameters
// without a gradient are skipped; a NaN gradient gives NaN. Sums run in double, in fixed
// chunks added in order, so the result is the same bits for any number of threads.
double grad_norm(const NamedTensors& params, double norm_type = 2.0);
// ValueError naming op unless norm_type > 0 (inf included): the orders grad_norm accepts.
void check_norm_type(double norm_type, const char* op);
// sqrt(Σ over all parameters of ‖∇p‖²): grad_norm(module.named_parameters()).
double total_grad_norm(const Module& module);
// One gradient norm per block: all parameters of blocks[l] together.
std::vector<double> block_grad_norms(const ModuleList& blocks);

struct LayerStats {
  std::vector<double> rms;                 // rms[l] = sqrt(mean(h_l²)) of block l's output
  std::vector<double> cosine_to_previous;  // [l] = mean over tokens of cos(h_l, h_{l-1}); [0] uses the block input
};
// outputs: each block's output (B, T, C), e.g. TransformerLM::block_outputs with
// capture_block_outputs on; input: what the first block received (may be undefined: then
// cosine_to_previous[0] is NaN).
LayerStats layer_stats(const std::vector<Tensor>& outputs, const Tensor& input = Tensor());

struct ResidualWrite {
  std::string path;    // e.g. "blocks.2.ffn_residual"
  double ratio = 0;    // ‖F‖ / ‖x‖ of the last forward
};
// Turns capture on or off in every Residual under root.
void set_residual_capture(Module& root, bool on);
// ‖F(x)‖/‖x‖ of every Residual under root (from its last forward with capture on).
std::vector<ResidualWrite> residual_write_ratios(Module& root);

}  // namespace tapegrad::nn
