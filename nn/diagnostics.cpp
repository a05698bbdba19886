// diagnostics.cpp — gradient norms, activation statistics, residual write ratios.
#include "diagnostics.hpp"

#include <algorithm>
#include <cmath>

#include "../autograd/cpu/parallel.hpp"
#include "../autograd/grad_mode.hpp"
#include "../autograd/ops.hpp"
#include "transformer_block.hpp"

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

OutputRecorder::OutputRecorder(const ModuleList& modules)
    : OutputRecorder(std::vector<std::shared_ptr<Module>>(modules.begin(), modules.end())) {}

OutputRecorder::OutputRecorder(const std::vector<std::shared_ptr<Module>>& modules) {
  for (const auto& m : modules)
    handles_.push_back(m->register_forward_hook(
        [this](Module&, const TensorList&, Tensor& output) { outputs_.push_back(output); }, "OutputRecorder"));
}

OutputRecorder::~OutputRecorder() {
  for (HookHandle& h : handles_) h.remove();
}

WriteRatioRecorder::WriteRatioRecorder(Module& root) {
  for (auto& [_, m] : root.named_modules()) {
    auto* block = dynamic_cast<TransformerBlock*>(m.get());  // the blocks of any model, found by type
    if (!block) continue;
    std::vector<Sublayer*> mine;
    auto watch = [&](Module* sublayer, const std::shared_ptr<Residual>& residual) {
      if (!sublayer) return;
      sublayers_.push_back(std::make_unique<Sublayer>());
      Sublayer* s = sublayers_.back().get();
      s->path = residual->path();
      mine.push_back(s);
      auto first_input = [s](Module&, TensorList& inputs) {
        if (s->seen_input) return;
        s->seen_input = true;
        s->input_norm = l2(inputs[0]);
      };
      if (residual->norm) handles_.push_back(residual->norm->register_forward_pre_hook(first_input, "WriteRatioRecorder"));
      handles_.push_back(sublayer->register_forward_pre_hook(first_input, "WriteRatioRecorder"));
      handles_.push_back(sublayer->register_forward_hook(
          [s](Module&, const TensorList&, Tensor& out) { s->output_norm = l2(out); }, "WriteRatioRecorder"));
    };
    watch(block->attn.get(), block->attn_residual);
    watch(block->cross_attn.get(), block->cross_residual);
    watch(block->ffn.get(), block->ffn_residual);
    // a new forward of the block: every sublayer waits for its first input again
    handles_.push_back(block->register_forward_pre_hook(
        [mine](Module&, TensorList&) {
          for (Sublayer* s : mine) s->seen_input = false;
        },
        "WriteRatioRecorder"));
  }
}

WriteRatioRecorder::~WriteRatioRecorder() {
  for (HookHandle& h : handles_) h.remove();
}

std::vector<ResidualWrite> WriteRatioRecorder::ratios() const {
  std::vector<ResidualWrite> out;
  for (const auto& s : sublayers_) out.push_back({s->path, s->input_norm > 0 ? s->output_norm / s->input_norm : NAN});
  return out;
}

}  // namespace tapegrad::nn
