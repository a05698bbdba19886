// ada_ln.hpp — adaptive LayerNorm: the norm's scale and shift are regressed from a
// conditioning vector c (a class or task embedding), as in DiT (Peebles & Xie 2023,
// arXiv 2212.09748).
//
//   AdaLN        [shift, scale] = Linear(SiLU(c)),   N(x) = LN(x)·(1 + scale) + shift
//                LN has no affine of its own (eps 1e-6 by default, as DiT). With zero_init the
//                Linear starts at zero, so the norm starts as a plain LN.
//   AdaLNZero    DiT's block norm: shift, scale and a gate per sublayer, all from one
//                zero-initialized Linear of the block (TransformerBlock::modulation), which
//                hands each sublayer's norm its own m = [shift, scale, gate] as the condition:
//                N(x) = LN(x)·(1 + scale) + shift, and the sublayer's output enters the
//                residual stream as gate ⊙ F. Every gate starts at 0: each block starts as the
//                identity (the "-Zero").
#pragma once

#include "linear.hpp"
#include "norm.hpp"

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

class AdaLN : public Norm {
 public:
  explicit AdaLN(const AdaLNOptions& options);
  AdaLN(std::int64_t dim, std::int64_t cond_dim) : AdaLN(AdaLNOptions(dim, cond_dim)) {}
  using Norm::forward;
  // x: (B, ..., dim), cond: (B, cond_dim)
  Tensor forward(const Tensor& x, const Tensor& cond) override;
  std::string extra_repr() const override;

  AdaLNOptions options;
  std::shared_ptr<Linear> modulation;  // (2·dim, cond_dim): shift then scale
};

class AdaLNZero : public Norm {
 public:
  AdaLNZero(std::int64_t dim, double eps);  // no parameters of its own: the block holds them
  using Norm::forward;
  // x: (B, ..., dim), m: (B, 3·dim) = [shift, scale, gate] -> LN(x)·(1 + scale) + shift
  Tensor forward(const Tensor& x, const Tensor& m) override;
  // update: (B, ..., dim) -> gate ⊙ update
  Tensor gate(const Tensor& update, const Tensor& m) override;
  std::string extra_repr() const override;

  std::int64_t dim;
  double eps;

 private:
  TensorList split(const Tensor& m, const Tensor& x) const;  // [shift, scale, gate], each (B, dim)
};

}  // namespace tapegrad::nn
