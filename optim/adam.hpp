// adam.hpp — Adam (Kingma & Ba 2015, https://arxiv.org/abs/1412.6980) with L2 weight decay and
// AMSGrad (Reddi et al. 2018), and AdamW, Adam with decoupled weight decay (Loshchilov & Hutter
// 2019, https://arxiv.org/abs/1711.05101); step for step the updates of torch.optim.Adam and
// torch.optim.AdamW (PyTorch 1.13).
//
// For each parameter θ with gradient g, at its t-th update (η lr, λ weight decay):
//
//   Adam:   g = g + λ·θ                     (L2: the decay goes through the moments)
//   AdamW:  θ = θ·(1 − η·λ)                 (decoupled: shrink θ directly, g untouched)
//   m   = β₁·m + (1 − β₁)·g                 first moment,  state "exp_avg"
//   v   = β₂·v + (1 − β₂)·g²                second moment, state "exp_avg_sq"
//   v̂   = max(v̂, v) with amsgrad, else v   state "max_exp_avg_sq" (amsgrad only)
//   θ   = θ − (η / (1 − β₁ᵗ)) · m / (√v̂ / √(1 − β₂ᵗ) + ε)
//
// m and v start at 0; t is the parameter's own step count (ParamState::step). Note that
// AdamOptions' weight_decay defaults to 0 for both, where torch.optim.AdamW defaults to 0.01.
#pragma once

#include <utility>

#include "../autograd/options.hpp"
#include "optimizer.hpp"

namespace tapegrad::optim {

using Betas = std::pair<double, double>;

struct AdamOptions {
  explicit AdamOptions(double lr = 1e-3) : lr_(lr) {}
  TAPEGRAD_ARG(double, lr);
  TAPEGRAD_ARG(Betas, betas) = Betas(0.9, 0.999);
  TAPEGRAD_ARG(double, eps) = 1e-8;
  TAPEGRAD_ARG(double, weight_decay) = 0.0;
  TAPEGRAD_ARG(bool, amsgrad) = false;
};

class Adam : public Optimizer {
 public:
  Adam(NamedTensors params, const AdamOptions& options);
  Adam(const TensorList& params, const AdamOptions& options) : Adam(numbered(params), options) {}
  explicit Adam(std::vector<ParamGroup<AdamOptions>> groups);

  const AdamOptions& options(std::size_t group) const;
  void set_options(std::size_t group, const AdamOptions& options);

  double lr(std::size_t group) const override { return options(group).lr(); }
  void set_lr(std::size_t group, double lr) override;
  // lr, beta1, beta2, eps, weight_decay, amsgrad (0/1)
  HyperParameters hyper_parameters(std::size_t group) const override;

 protected:
  // decoupled: AdamW's weight decay.
  Adam(std::string name, std::vector<ParamGroup<AdamOptions>> groups, bool decoupled);
  void set_hyper_parameters(std::size_t group, const HyperParameters& hp) override;
  std::vector<std::string> buffer_names(std::size_t group) const override;
  void update(std::size_t group, const Tensor& param, const Tensor& grad, ParamState& state) override;

 private:
  void check(const AdamOptions& options) const;
  bool decoupled_;
  std::vector<AdamOptions> options_;  // one per group
};

class AdamW : public Adam {
 public:
  AdamW(NamedTensors params, const AdamOptions& options);
  AdamW(const TensorList& params, const AdamOptions& options) : AdamW(numbered(params), options) {}
  explicit AdamW(std::vector<ParamGroup<AdamOptions>> groups);
};

}  // namespace tapegrad::optim
