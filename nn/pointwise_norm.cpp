// pointwise_norm.cpp — DyT and Derf (pointwise_norm.hpp): their parameters, and their formulas
// written with elementwise ops, whose backwards give the gradients (sums over all but the channels):
//   DyT,  t = tanh(α·x):               dx = dy ⊙ g ⊙ α(1 − t²),  dα = Σ dy ⊙ g ⊙ x(1 − t²)
//   Derf, e = 2/√π·exp(−(α·x + s)²):   dx = dy ⊙ g ⊙ α·e,  dα = Σ dy ⊙ g ⊙ x·e,  ds = Σ dy ⊙ g ⊙ e
//   both, f = tanh(α·x) or erf(α·x + s): dg = Σ dy ⊙ f,  db = Σ dy
#include "pointwise_norm.hpp"

#include <cmath>
#include <sstream>

#include "../autograd/ops.hpp"

namespace tapegrad::nn {

PointwiseNorm::PointwiseNorm(const char* name, const PointwiseNormOptions& opts) : Norm(name), options(opts) {
  if (opts.dim() <= 0) throw ValueError(std::string(name) + ": dim must be positive, got " + std::to_string(opts.dim()));
  if (!(opts.alpha0() > 0 && std::isfinite(opts.alpha0()))) {
    std::ostringstream os;
    os << name << ": alpha0 (α at init) must be positive and finite, got " << opts.alpha0();
    throw ValueError(os.str());
  }
  alpha = register_parameter("alpha", full({1}, opts.alpha0(), opts.dtype()));
  weight = register_parameter("weight", ones({opts.dim()}, opts.dtype()));
  bias = register_parameter("bias", zeros({opts.dim()}, opts.dtype()));
}

// y = g ⊙ f(x) + b
Tensor PointwiseNorm::forward(const Tensor& input, const Tensor& condition) {
  Tensor x = input, cond = condition;  // cond is ignored
  ForwardCall call(*this, {&x, &cond});
  // x: (..., dim), refused by name otherwise (the elementwise ops would broadcast a size-1 dim)
  if (x.dim() == 0 || x.size(-1) != options.dim())
    throw ShapeError(type_name() + ": input must be (..., dim = " + std::to_string(options.dim()) + "), got " +
                     shape_str(x.shape()));
  return call.output(add(mul(squash(x), weight), bias));
}

std::string PointwiseNorm::extra_repr() const {
  std::ostringstream os;
  os << "dim=" << options.dim() << ", alpha0=" << options.alpha0();
  return os.str();
}

DyT::DyT(const PointwiseNormOptions& opts) : PointwiseNorm("DyT", opts) {
  if (opts.shift0() != 0) throw ValueError("DyT: shift0 applies to Derf only (DyT has no shift); leave it at 0");
}

Tensor DyT::squash(const Tensor& x) { return tanh(mul(x, alpha)); }  // tanh(α·x)

Derf::Derf(const PointwiseNormOptions& opts) : PointwiseNorm("Derf", opts) {
  if (!std::isfinite(opts.shift0())) throw ValueError("Derf: shift0 (s at init) must be finite");
  shift = register_parameter("shift", full({1}, opts.shift0(), opts.dtype()));
}

Tensor Derf::squash(const Tensor& x) { return erf(add(mul(x, alpha), shift)); }  // erf(α·x + s)

std::string Derf::extra_repr() const {
  std::ostringstream os;
  os << PointwiseNorm::extra_repr() << ", shift0=" << options.shift0();
  return os.str();
}

}  // namespace tapegrad::nn
