// adam.cpp — Adam and AdamW: the fused update kernel (one pass over raw pointers per
// parameter, no temporary tensors) and the option checks. The formulas are in adam.hpp; the
// order of the floating-point operations follows torch.optim's single-tensor Adam/AdamW, with
// the per-step scalars (bias corrections, step size) computed in double as Python does.
#include "adam.hpp"

#include <algorithm>
#include <cmath>

#include "../autograd/cpu/parallel.hpp"

namespace tapegrad::optim {

namespace {

// The per-step scalars of one parameter's update, already converted to the element type.
template <typename T>
struct AdamScalars {
  T l2;                    // λ for Adam's L2 term (0 for AdamW)
  T decay;                 // 1 − η·λ for AdamW (1 for Adam)
  T beta1, one_minus_beta1;
  T beta2, one_minus_beta2;
  T bias_correction2_sqrt;  // √(1 − β₂ᵗ)
  T eps;
  T neg_step_size;          // −η / (1 − β₁ᵗ)
};

// theta, grad, exp_avg, exp_avg_sq, max_exp_avg_sq: (n); max_exp_avg_sq is only read with amsgrad.
// One loop serves Adam and AdamW without branches: adding 0·θ (AdamW's l2) and multiplying by 1
// (Adam's decay) are exact, and a branch-free body is what the compiler vectorizes (the sqrt as
// well when errno is off, -fno-math-errno).
template <typename T, bool amsgrad>
void adam_update(T* theta, const T* grad, T* exp_avg, T* exp_avg_sq, T* max_exp_avg_sq, std::int64_t n,
                 const AdamScalars<T>& s) {
  parallel_region_if(n > kParallelGrain, [&] {
#pragma omp for nowait
    for (std::int64_t i = 0; i < n; ++i) {
      const T g = grad[i] + s.l2 * theta[i];
      const T decayed = theta[i] * s.decay;
      exp_avg[i] = exp_avg[i] * s.beta1 + s.one_minus_beta1 * g;
      exp_avg_sq[i] = exp_avg_sq[i] * s.beta2 + s.one_minus_beta2 * g * g;
      T second_moment = exp_avg_sq[i];
      if constexpr (amsgrad) {
        max_exp_avg_sq[i] = std::max(max_exp_avg_sq[i], exp_avg_sq[i]);
        second_moment = max_exp_avg_sq[i];
      }
      const T denom = std::sqrt(second_moment) / s.bias_correction2_sqrt + s.eps;
      theta[i] = decayed + s.neg_step_size * exp_avg[i] / denom;
    }
  });
}

std::vector<NamedTensors> params_of(const std::vector<ParamGroup<AdamOptions>>& groups) {
  std::vector<NamedTensors> out;
  for (const auto& g : groups) out.push_back(g.params);
  return out;
}

}  // namespace

Adam::Adam(NamedTensors params, const AdamOptions& options)
    : Adam("Adam", {{std::move(params), options}}, false) {}

Adam::Adam(std::vector<ParamGroup<AdamOptions>> groups) : Adam("Adam", std::move(groups), false) {}

Adam::Adam(std::string name, std::vector<ParamGroup<AdamOptions>> groups, bool decoupled)
    : Optimizer(std::move(name), params_of(groups)), decoupled_(decoupled) {
  for (const auto& g : groups) {
    check(g.options);
    options_.push_back(g.options);
  }
}

AdamW::AdamW(NamedTensors params, const AdamOptions& options)
    : Adam("AdamW", {{std::move(params), options}}, true) {}

AdamW::AdamW(std::vector<ParamGroup<AdamOptions>> groups) : Adam("AdamW", std::move(groups), true) {}

void Adam::check(const AdamOptions& o) const {
  // Written as !(x >= 0) so that NaN fails too.
  if (!(o.lr() >= 0)) fail("invalid learning rate " + number_str(o.lr()) + " (must be >= 0)");
  if (!(o.eps() >= 0)) fail("invalid eps " + number_str(o.eps()) + " (must be >= 0)");
  const auto [beta1, beta2] = o.betas();
  if (!(beta1 >= 0 && beta1 < 1)) fail("invalid beta1 " + number_str(beta1) + " (must be in [0, 1))");
  if (!(beta2 >= 0 && beta2 < 1)) fail("invalid beta2 " + number_str(beta2) + " (must be in [0, 1))");
  if (!(o.weight_decay() >= 0)) fail("invalid weight_decay " + number_str(o.weight_decay()) + " (must be >= 0)");
}

const AdamOptions& Adam::options(std::size_t group) const {
  group_params(group);  // range check
  return options_[group];
}

void Adam::set_options(std::size_t group, const AdamOptions& options) {
  group_params(group);
  check(options);
  options_[group] = options;
}

void Adam::set_lr(std::size_t group, double lr) { set_options(group, AdamOptions(options(group)).lr(lr)); }

HyperParameters Adam::hyper_parameters(std::size_t group) const {
  const AdamOptions& o = options(group);
  return {{"lr", o.lr()},
          {"beta1", o.betas().first},
          {"beta2", o.betas().second},
          {"eps", o.eps()},
          {"weight_decay", o.weight_decay()},
          {"amsgrad", o.amsgrad() ? 1.0 : 0.0}};
}

void Adam::set_hyper_parameters(std::size_t group, const HyperParameters& hp) {
  auto get = [&](const char* key) { return hyper_parameter(hp, key, name()); };
  set_options(group, AdamOptions(get("lr"))
                         .betas({get("beta1"), get("beta2")})
                         .eps(get("eps"))
                         .weight_decay(get("weight_decay"))
                         .amsgrad(get("amsgrad") != 0));
}

std::vector<std::string> Adam::buffer_names(std::size_t group) const {
  if (options(group).amsgrad()) return {"exp_avg", "exp_avg_sq", "max_exp_avg_sq"};
  return {"exp_avg", "exp_avg_sq"};
}

void Adam::update(std::size_t group, const Tensor& param, const Tensor& grad, ParamState& state) {
  const AdamOptions& o = options_[group];
  // First update (or amsgrad switched on later): the moments start at zero.
  for (const std::string& key : buffer_names(group))
    if (!state.buffer(key).defined()) state.buffers.emplace_back(key, zeros_like(param));
  const Tensor exp_avg = state.buffer("exp_avg"), exp_avg_sq = state.buffer("exp_avg_sq");
  const Tensor max_exp_avg_sq = state.buffer("max_exp_avg_sq");

  const auto [beta1, beta2] = o.betas();
  const double t = static_cast<double>(state.step);
  const double bias_correction1 = 1 - std::pow(beta1, t);
  const double bias_correction2 = 1 - std::pow(beta2, t);
  const double lambda = o.weight_decay();
  dispatch_floating(param.dtype(), "Adam.step", [&]<typename T>() {
    AdamScalars<T> s;
    s.l2 = T(decoupled_ ? 0.0 : lambda);
    s.decay = T(decoupled_ ? 1 - o.lr() * lambda : 1.0);
    s.beta1 = T(beta1);
    s.one_minus_beta1 = T(1 - beta1);
    s.beta2 = T(beta2);
    s.one_minus_beta2 = T(1 - beta2);
    s.bias_correction2_sqrt = T(std::sqrt(bias_correction2));
    s.eps = T(o.eps());
    s.neg_step_size = T(-(o.lr() / bias_correction1));
    if (max_exp_avg_sq.defined())
      adam_update<T, true>(param.data<T>(), grad.data<T>(), exp_avg.data<T>(), exp_avg_sq.data<T>(),
                           max_exp_avg_sq.data<T>(), param.numel(), s);
    else
      adam_update<T, false>(param.data<T>(), grad.data<T>(), exp_avg.data<T>(), exp_avg_sq.data<T>(), nullptr,
                            param.numel(), s);
  });
  // Written in place: a graph that saved the old values refuses to backward (Saves, node.hpp).
  param.increment_version();
}

}  // namespace tapegrad::optim
