// norm.hpp — LayerNorm and RMSNorm over the last dim.
//
//   LayerNorm: y = (x - mean) / sqrt(var + eps) · weight + bias   (Ba et al. 2016)
//   RMSNorm:   y = x / sqrt(mean(x²) + eps) · weight               (Zhang & Sennrich 2019)
// weight (gamma) starts at 1 and bias (beta) at 0, named as in PyTorch's nn.LayerNorm.
#pragma once

#include "module.hpp"
#include "../autograd/options.hpp"

namespace tapegrad::nn {

struct NormOptions {
  explicit NormOptions(std::int64_t dim) : dim_(dim) {}
  TAPEGRAD_ARG(std::int64_t, dim);
  TAPEGRAD_ARG(double, eps) = 1e-5;
  TAPEGRAD_ARG(bool, elementwise_affine) = true;
  TAPEGRAD_ARG(bool, bias) = true;  // LayerNorm only
  TAPEGRAD_ARG(DType, dtype) = DType::float32;
};

class LayerNorm : public UnaryModule {
 public:
  explicit LayerNorm(const NormOptions& options);
  explicit LayerNorm(std::int64_t dim, double eps = 1e-5) : LayerNorm(NormOptions(dim).eps(eps)) {}
  // x: (..., dim)
  Tensor forward(const Tensor& x) override;
  std::string extra_repr() const override;

  NormOptions options;
  Tensor weight;  // (dim), undefined without affine
  Tensor bias;    // (dim), undefined without affine or bias
};

class RMSNorm : public UnaryModule {
 public:
  explicit RMSNorm(const NormOptions& options);
  explicit RMSNorm(std::int64_t dim, double eps = 1e-6) : RMSNorm(NormOptions(dim).eps(eps)) {}
  Tensor forward(const Tensor& x) override;
  std::string extra_repr() const override;

  NormOptions options;
  Tensor weight;  // (dim)
};

}  // namespace tapegrad::nn
