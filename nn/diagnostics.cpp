// diagnostics.cpp — gradient norms, activation statistics, residual write ratios.
#include "diagnostics.hpp"

#include <cmath>

#include "../autograd/grad_mode.hpp"
#include "../autograd/ops.hpp"
#include "residual.hpp"

namespace tapegrad::nn {

namespace {
double l2(const Tensor& t) {
  double s = 0;
  for (double v : t.to_vector()) s += v * v;
  return std::sqrt(s);
}
}  // namespace

std::vector<ParameterNorms> parameter_norms(const Module& module) {
  std::vector<ParameterNorms> out;
  for (const auto& [name, p] : module.named_parameters())
    out.push_back({name, p.grad().defined() ? l2(p.grad()) : 0.0, l2(p)});
  return out;
}

double total_grad_norm(const Module& module) {
  double s = 0;
  for (const auto& n : parameter_norms(module)) s += n.grad_norm * n.grad_norm;
  return std::sqrt(s);
}

std::vector<double> block_grad_norms(const ModuleList& blocks) {
  std::vector<double> out;
  for (const auto& block : blocks) out.push_back(total_grad_norm(*block));
  return out;
}

namespace {
// Mean over tokens of the cosine similarity of a and b, both (..., C).
double mean_token_cosine(const Tensor& a, const Tensor& b) {
  const std::int64_t C = a.size(-1);
  const Tensor a2 = a.reshape({-1, C}), b2 = b.reshape({-1, C});
  const Tensor dot = sum(mul(a2, b2), {1});
  const Tensor norms = mul(sqrt(sum(mul(a2, a2), {1})), sqrt(sum(mul(b2, b2), {1})));
  return mean(div(dot, clamp(norms, 1e-12, std::nullopt))).item();
}
}  // namespace

LayerStats layer_stats(const std::vector<Tensor>& outputs, const Tensor& input) {
  NoGradGuard no_grad;
  LayerStats stats;
  for (std::size_t l = 0; l < outputs.size(); ++l) {
    const Tensor& h = outputs[l];
    stats.rms.push_back(std::sqrt(mean(mul(h, h)).item()));
    const Tensor& previous = l == 0 ? input : outputs[l - 1];
    stats.cosine_to_previous.push_back(previous.defined() ? mean_token_cosine(h, previous) : NAN);
  }
  return stats;
}

void set_residual_capture(Module& root, bool on) {
  for (auto& [_, m] : root.named_modules())
    if (auto* r = dynamic_cast<Residual*>(m.get())) r->capture_stats = on;
}

std::vector<ResidualWrite> residual_write_ratios(Module& root) {
  std::vector<ResidualWrite> out;
  for (auto& [path, m] : root.named_modules())
    if (auto* r = dynamic_cast<Residual*>(m.get()))
      out.push_back({path, r->last_input_norm > 0 ? r->last_update_norm / r->last_input_norm : NAN});
  return out;
}

}  // namespace tapegrad::nn
