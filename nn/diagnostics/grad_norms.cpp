// grad_norms.cpp — gradient and parameter norms; the global norm in deterministic chunks.
#include "grad_norms.hpp"

#include <algorithm>
#include <cmath>

#include "../../autograd/cpu/parallel.hpp"
#include "../../autograd/grad_mode.hpp"
#include "../../autograd/ops.hpp"
#include "measures.hpp"

namespace tapegrad::nn {

std::vector<ParameterNorms> parameter_norms(const Module& module) {
  std::vector<ParameterNorms> out;
  for (const auto& [name, p] : module.named_parameters())
    out.push_back({name, p.grad().defined() ? l2_norm(p.grad()) : 0.0, l2_norm(p)});
  return out;
}

namespace {

// The reduction combines per-chunk partial results in chunk order, so the norm is the same
// bits whatever the number of threads (an OpenMP reduction clause does not promise that).
constexpr std::int64_t kChunk = kParallelGrain;

// max that keeps a NaN once it has seen one (std::max would drop it).
double nan_max(double acc, double v) { return (v > acc || std::isnan(v)) ? v : acc; }

// Σ|g|^p over one gradient (p finite), or max|g| (p = inf).
template <typename T>
double norm_part(const T* g, std::int64_t n, double p) {
  const std::int64_t chunks = (n + kChunk - 1) / kChunk;
  std::vector<double> partial(chunks, 0.0);
  parallel_region_if(chunks > 1, [&] {
#pragma omp for nowait
    for (std::int64_t c = 0; c < chunks; ++c) {
      const std::int64_t begin = c * kChunk, end = std::min(n, begin + kChunk);
      double acc = 0;
      if (std::isinf(p))
        for (std::int64_t i = begin; i < end; ++i) acc = nan_max(acc, std::abs(double(g[i])));
      else if (p == 2)
        for (std::int64_t i = begin; i < end; ++i) acc += double(g[i]) * double(g[i]);
      else
        for (std::int64_t i = begin; i < end; ++i) acc += std::pow(std::abs(double(g[i])), p);
      partial[c] = acc;
    }
  });
  double total = 0;
  for (double v : partial) total = std::isinf(p) ? nan_max(total, v) : total + v;
  return total;
}

}  // namespace

void check_norm_type(double norm_type, const char* op) {
  if (!(norm_type > 0))
    throw ValueError(std::string(op) + ": norm_type " + number_str(norm_type) + " must be > 0 (or inf)");
}

double grad_norm(const NamedTensors& params, double norm_type) {
  check_norm_type(norm_type, "grad_norm");
  NoGradGuard no_grad;
  double total = 0;
  for (const auto& [_, p] : params) {
    Tensor grad = p.grad();
    if (!grad.defined()) continue;
    if (!grad.is_contiguous()) grad = grad.contiguous();
    const double part = dispatch_floating(grad.dtype(), "grad_norm", [&]<typename T>() {
      return norm_part(grad.template data<T>(), grad.numel(), norm_type);
    });
    total = std::isinf(norm_type) ? nan_max(total, part) : total + part;
  }
  if (std::isinf(norm_type)) return total;
  return norm_type == 2 ? std::sqrt(total) : std::pow(total, 1.0 / norm_type);
}

double total_grad_norm(const Module& module) { return grad_norm(module.named_parameters()); }

std::vector<double> block_grad_norms(const ModuleList& blocks) {
  std::vector<double> out;
  for (const auto& block : blocks) out.push_back(total_grad_norm(*block));
  return out;
}

}  // namespace tapegrad::nn
