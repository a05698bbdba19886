// sublayer.cpp — Sublayer: a block's sublayer as the placement formulas call it.
#include <cmath>

#include "../../autograd/grad_mode.hpp"
#include "../../autograd/ops.hpp"
#include "placement.hpp"

namespace tapegrad::nn {

namespace {
double l2(const Tensor& t) {
  NoGradGuard no_grad;
  return std::sqrt(sum(mul(t, t)).item());
}
}  // namespace

Sublayer::Sublayer(std::function<Tensor(const Tensor&)> fn, Residual& residual, Tensor cond)
    : fn_(std::move(fn)), residual_(&residual), cond_(std::move(cond)) {}

// A formula hands the stream entering a sublayer first to its norm (Pre-LN: F(N(x))) or to
// the sublayer itself (Post-LN: N(x + F(x))): that first input is the x of ‖F‖/‖x‖.
void Sublayer::observe_input(const Tensor& h) const {
  if (seen_input_) return;
  seen_input_ = true;
  if (residual_->capture_stats) residual_->last_input_norm = l2(h);
}

Tensor Sublayer::operator()(const Tensor& h) const {
  observe_input(h);
  Tensor update = fn_(h);
  if (residual_->norm) update = residual_->norm->gate(update, cond_);
  if (residual_->capture_stats) residual_->last_update_norm = l2(update);
  return update;
}

Tensor Sublayer::N(const Tensor& h) const {
  observe_input(h);
  if (!residual_->norm) throw ValueError("Sublayer: " + residual_->path() + " has no norm");
  return residual_->norm->forward(h, cond_);
}

Tensor Sublayer::alpha_x(const Tensor& x) const { return residual_->alpha == 1.0 ? x : mul(x, residual_->alpha); }

const Tensor& Sublayer::a() const {
  if (!residual_->scale.defined()) throw ValueError("Sublayer: " + residual_->path() + " has no ReZero gate");
  return residual_->scale;
}

}  // namespace tapegrad::nn
