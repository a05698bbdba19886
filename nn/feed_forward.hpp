// feed_forward.hpp — the transformer's position-wise MLP.
//
//   MLP:    y = fc2(act(fc1(x)))                      fc1: (hidden, dim), fc2: (dim, hidden)
//   SwiGLU: y = fc2(silu(fc1(x)) ⊙ fc_gate(x))        (Shazeer 2020, "GLU Variants Improve
//                                                       Transformer", arXiv 2002.05202)
// With GELU (either form) the MLP runs as the fused op gelu_mlp: the same numbers, and it keeps
// fc1's output only for the backward (gelu's output is recomputed there); with hooks on fc1
// or fc2, and in anomaly mode, the layers run one by one.
#pragma once

#include "activation.hpp"
#include "dropout.hpp"
#include "linear.hpp"

namespace tapegrad::nn {

struct FeedForwardOptions {
  FeedForwardOptions(std::int64_t dim, std::int64_t hidden) : dim_(dim), hidden_(hidden) {}
  TAPEGRAD_ARG(std::int64_t, dim);
  TAPEGRAD_ARG(std::int64_t, hidden);
  TAPEGRAD_ARG(Activation, activation) = Activation::gelu;
  TAPEGRAD_ARG(bool, bias) = true;
  TAPEGRAD_ARG(double, dropout) = 0.0;  // on the output
  TAPEGRAD_ARG(DType, dtype) = DType::float32;
};

class FeedForward : public UnaryModule {
 public:
  explicit FeedForward(const FeedForwardOptions& options);
  // x: (..., dim) -> (..., dim)
  Tensor forward(const Tensor& x) override;
  std::string extra_repr() const override;

  // Whether the activation runs as one fused op with fc1 and fc2 (gelu_mlp: GELU in either
  // form), as forward() does unless fc1 or fc2 has forward hooks or anomaly mode is on. The
  // memory estimate asks the same question.
  static bool fuses(Activation activation) {
    return activation == Activation::gelu || activation == Activation::gelu_tanh;
  }

  FeedForwardOptions options;
  std::shared_ptr<Linear> fc1, fc_gate, fc2;  // fc_gate only for SwiGLU
  std::shared_ptr<Dropout> drop;
};

}  // namespace tapegrad::nn
