// norm.hpp — the Norm interface, and LayerNorm and RMSNorm over the last dim.
//
//   LayerNorm: y = (x - mean) / sqrt(var + eps) · weight + bias   (Ba et al. 2016)
//   RMSNorm:   y = x / sqrt(mean(x²) + eps) · weight               (Zhang & Sennrich 2019)
// weight (gamma) starts at 1 and bias (beta) at 0, named as in PyTorch's nn.LayerNorm.
//
// Every norm a placement can use (these two, AdaLN and AdaLN-Zero of ada_ln.hpp) is a Norm:
// forward(x, cond) normalizes x, and a conditional norm reads the condition cond (the others
// ignore it). gate(update, cond) is how much of a sublayer's output enters the residual
// stream: the update itself, except for AdaLN-Zero, whose gate is learned. So a placement's
// formula calls any norm the same way, and no code asks which norm it holds.
#pragma once

#include "../autograd/options.hpp"
#include "module.hpp"

namespace tapegrad::nn {

class Norm : public UnaryModule {
 public:
  using UnaryModule::UnaryModule;
  // x: (B, ..., dim); cond: (B, cond_dim) for a conditional norm, ignored (may be undefined) otherwise.
  virtual Tensor forward(const Tensor& x, const Tensor& cond) = 0;
  // N(x) without a condition: what Sequential calls. A conditional norm refuses it.
  Tensor forward(const Tensor& x) override { return forward(x, Tensor()); }
  Tensor operator()(const Tensor& x, const Tensor& cond = Tensor()) { return forward(x, cond); }
  // The share of a sublayer's output F that joins the residual stream: F itself by default.
  virtual Tensor gate(const Tensor& update, const Tensor& /*cond*/) { return update; }
};

struct NormOptions {
  explicit NormOptions(std::int64_t dim) : dim_(dim) {}
  TAPEGRAD_ARG(std::int64_t, dim);
  TAPEGRAD_ARG(double, eps) = 1e-5;
  TAPEGRAD_ARG(bool, elementwise_affine) = true;
  TAPEGRAD_ARG(bool, bias) = true;  // LayerNorm only
  TAPEGRAD_ARG(DType, dtype) = DType::float32;
};

class LayerNorm : public Norm {
 public:
  explicit LayerNorm(const NormOptions& options);
  explicit LayerNorm(std::int64_t dim, double eps = 1e-5) : LayerNorm(NormOptions(dim).eps(eps)) {}
  using Norm::forward;
  // x: (..., dim); cond is ignored
  Tensor forward(const Tensor& x, const Tensor& cond) override;
  std::string extra_repr() const override;

  NormOptions options;
  Tensor weight;  // (dim), undefined without affine
  Tensor bias;    // (dim), undefined without affine or bias
};

class RMSNorm : public Norm {
 public:
  explicit RMSNorm(const NormOptions& options);
  explicit RMSNorm(std::int64_t dim, double eps = 1e-6) : RMSNorm(NormOptions(dim).eps(eps)) {}
  using Norm::forward;
  Tensor forward(const Tensor& x, const Tensor& cond) override;
  std::string extra_repr() const override;

  NormOptions options;
  Tensor weight;  // (dim)
};

}  // namespace tapegrad::nn
