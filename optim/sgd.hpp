// sgd.hpp — stochastic gradient descent with momentum, dampening, Nesterov and weight decay,
// step for step the update of torch.optim.SGD (PyTorch 1.13).
//
// For each parameter θ with gradient g, at its t-th update (λ weight decay, μ momentum,
// τ dampening, η learning rate):
//
//   d   = g + λ·θ                       (weight decay as an L2 term; skipped when λ = 0)
//   b_1 = d                             (the momentum buffer starts at the first gradient)
//   b_t = μ·b_{t-1} + (1 − τ)·d         (t > 1)
//   d   = d + μ·b_t   with nesterov     (Sutskever et al. 2013, as PyTorch writes it)
//   d   = b_t         otherwise         (no buffer at all when μ = 0)
//   θ   = θ − η·d
//
// State per parameter: "momentum_buffer" (when μ ≠ 0).
#pragma once

#include "../autograd/options.hpp"
#include "optimizer.hpp"

namespace tapegrad::optim {

struct SGDOptions {
  explicit SGDOptions(double lr) : lr_(lr) {}
  TAPEGRAD_ARG(double, lr);
  TAPEGRAD_ARG(double, momentum) = 0.0;
  TAPEGRAD_ARG(double, dampening) = 0.0;
  TAPEGRAD_ARG(double, weight_decay) = 0.0;
  TAPEGRAD_ARG(bool, nesterov) = false;
};

class SGD : public Optimizer {
 public:
  // One group: every parameter with the same options.
  SGD(NamedTensors params, const SGDOptions& options);
  SGD(const TensorList& params, const SGDOptions& options) : SGD(numbered(params), options) {}
  // One group per entry, each with its own options.
  explicit SGD(std::vector<ParamGroup<SGDOptions>> groups);

  const SGDOptions& options(std::size_t group) const;
  // Checks and replaces a group's options (ValueError naming the bad setting).
  void set_options(std::size_t group, const SGDOptions& options);

  double lr(std::size_t group) const override { return options(group).lr(); }
  void set_lr(std::size_t group, double lr) override;
  // lr, momentum, dampening, weight_decay, nesterov (0/1)
  HyperParameters hyper_parameters(std::size_t group) const override;

 protected:
  void set_hyper_parameters(std::size_t group, const HyperParameters& hp) override;
  std::vector<std::string> buffer_names(std::size_t group) const override;
  void update(std::size_t group, const Tensor& param, const Tensor& grad, ParamState& state) override;

 private:
  void check(const SGDOptions& options) const;
  std::vector<SGDOptions> options_;  // one per group
};

}  // namespace tapegrad::optim
