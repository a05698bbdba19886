// ada_ln.hpp — adaptive LayerNorm: the norm's scale and shift are regressed from a
// conditioning vector c (a class or task embedding), as in DiT (Peebles & Xie 2023,
// arXiv 2212.09748):
//   [shift, scale] = Linear(SiLU(c)),   y = LN(x)·(1 + scale) + shift
// LN has no affine of its own (eps 1e-6 by default, as DiT). With zero_init the Linear starts
// at zero, so the norm starts as a plain LN (the "-Zero" of AdaLN-Zero).
#pragma once

#include "linear.hpp"

namespace tapegrad::nn {

// x·(1 + scale) + shift, with shift and scale (B, C) broadcast over the middle dims of x (B, ..., C).
Tensor modulate(const Tensor& x, const Tensor& shift, const Tensor& scale);

struct AdaLNOptions {
  AdaLNOptions(std::int64_t dim, std::int64_t cond_dim) : dim_(dim), cond_dim_(cond_dim) {}
  TAPEGRAD_ARG(std::int64_t, dim);
  TAPEGRAD_ARG(std::int64_t, cond_dim);
  TAPEGRAD_ARG(double, eps) = 1e-6;
  TAPEGRAD_ARG(bool, zero_init) = false;
  TAPEGRAD_ARG(DType, dtype) = DType::float32;
};

class AdaLN : public Module {
 public:
  explicit AdaLN(const AdaLNOptions& options);
  AdaLN(std::int64_t dim, std::int64_t cond_dim) : AdaLN(AdaLNOptions(dim, cond_dim)) {}
  // x: (B, ..., dim), cond: (B, cond_dim)
  Tensor forward(const Tensor& x, const Tensor& cond);
  std::string extra_repr() const override;

  AdaLNOptions options;
  std::shared_ptr<Linear> modulation;  // (2·dim, cond_dim): shift then scale
};

}  // namespace tapegrad::nn
