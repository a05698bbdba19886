// pointwise_norm.hpp — the normalization-free "norms": a squashing function of each element,
// with a learned scalar inside and a per-channel affine outside, in the place of a LayerNorm.
// No mean, no variance: nothing is computed across the channels or the tokens.
//
//   DyT   y = g ⊙ tanh(α·x) + b        Dynamic Tanh: Zhu, Chen, He, LeCun & Liu 2025,
//                                      "Transformers without Normalization", arXiv 2503.10622
//                                      (code: github.com/jiachenzhu/DyT)
//   Derf  y = g ⊙ erf(α·x + s) + b     Dynamic erf: Chen, Lu, Zhu, Sun & Liu 2025, "Stronger
//                                      Normalization-Free Transformers", arXiv 2512.10938
//                                      (code: github.com/zlab-princeton/Derf)
//
// α (alpha) and s (shift) are learned scalars, shape (1); g (weight, ones) and b (bias, zeros)
// are learned per channel: the reference code's names (in the order of its ViT file). α starts
// at alpha0, s at shift0: 0.5 and 0 are both papers' defaults (vision, speech, DNA); for
// language models DyT's authors tune alpha0 per role, larger at the attention norms
// (TransformerBlockConfig::norm_alpha0_* has their table). Both are composed of elementwise ops
// (mul, tanh or erf, mul, add), whose backwards are already there: unlike LayerNorm there is no
// reduction worth fusing.
#pragma once

#include "../autograd/options.hpp"
#include "norm.hpp"

namespace tapegrad::nn {

struct PointwiseNormOptions {
  explicit PointwiseNormOptions(std::int64_t dim) : dim_(dim) {}
  TAPEGRAD_ARG(std::int64_t, dim);
  TAPEGRAD_ARG(double, alpha0) = 0.5;  // α at init
  TAPEGRAD_ARG(double, shift0) = 0.0;  // Derf's s at init; DyT has no s and refuses another value
  TAPEGRAD_ARG(DType, dtype) = DType::float32;
};

// What DyT and Derf share: y = g ⊙ f(x) + b, with f the squashing of each element.
class PointwiseNorm : public Norm {
 public:
  using Norm::forward;
  // x: (..., dim) -> (..., dim); cond is ignored
  Tensor forward(const Tensor& x, const Tensor& cond) override;
  std::string extra_repr() const override;

  PointwiseNormOptions options;
  Tensor alpha;   // (1), starts at alpha0
  Tensor weight;  // (dim), g
  Tensor bias;    // (dim), b

 protected:
  PointwiseNorm(const char* name, const PointwiseNormOptions& options);
  virtual Tensor squash(const Tensor& x) = 0;  // f(x), elementwise
};

// y = g ⊙ tanh(α·x) + b
class DyT : public PointwiseNorm {
 public:
  explicit DyT(const PointwiseNormOptions& options);
  explicit DyT(std::int64_t dim) : DyT(PointwiseNormOptions(dim)) {}

 protected:
  Tensor squash(const Tensor& x) override;
};

// y = g ⊙ erf(α·x + s) + b
class Derf : public PointwiseNorm {
 public:
  explicit Derf(const PointwiseNormOptions& options);
  explicit Derf(std::int64_t dim) : Derf(PointwiseNormOptions(dim)) {}
  std::string extra_repr() const override;

  Tensor shift;  // (1), s, starts at shift0

 protected:
  Tensor squash(const Tensor& x) override;
};

}  // namespace tapegrad::nn
