// sublayer.cpp — Sublayer: a block's sublayer as the placement formulas call it.
#include "../../autograd/ops.hpp"
#include "placement.hpp"

namespace tapegrad::nn {

Sublayer::Sublayer(std::function<Tensor(const Tensor&)> fn, Residual& residual, Tensor cond)
    : fn_(std::move(fn)), residual_(&residual), cond_(std::move(cond)) {}

Tensor Sublayer::operator()(const Tensor& h) const {
  const Tensor update = fn_(h);
  const Tensor gated = residual_->norm ? residual_->norm->gate(update, cond_) : update;
  return residual_->branch == 1.0 ? gated : mul(gated, residual_->branch);
}

Tensor Sublayer::N(const Tensor& h) const {
  if (!residual_->norm) throw ValueError("Sublayer: " + residual_->path() + " has no norm");
  return residual_->norm->forward(h, cond_);
}

Tensor Sublayer::N_out(const Tensor& h) const {
  if (!residual_->norm_out) throw ValueError("Sublayer: " + residual_->path() + " has no output norm");
  return residual_->norm_out->forward(h, cond_);
}

Tensor Sublayer::alpha_x(const Tensor& x) const { return residual_->alpha == 1.0 ? x : mul(x, residual_->alpha); }

const Tensor& Sublayer::a() const {
  if (!residual_->scale.defined()) throw ValueError("Sublayer: " + residual_->path() + " has no ReZero gate");
  return residual_->scale;
}

Tensor Sublayer::eigen_lr() const {
  if (!residual_->eigen_lr.defined()) throw ValueError("Sublayer: " + residual_->path() + " has no eigen learning rates");
  return abs(mul(residual_->eigen_lr, residual_->eigen_lr_scaling.factor()));
}

}  // namespace tapegrad::nn
