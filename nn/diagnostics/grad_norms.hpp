// grad_norms.hpp — do gradients vanish or explode toward the bottom layers? The norms of each
// parameter's gradient and value, of all of them together (what optim::clip_grad_norm_ clips),
// and of each block's. Read after backward; nothing here records on the tape.
#pragma once

#include <string>
#include <vector>

#include "../containers.hpp"
#include "../module.hpp"

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

}  // namespace tapegrad::nn
