// feed_forward.hpp — the transformer's position-wise MLP.
//
//   MLP:    y = fc2(act(fc1(x)))                      fc1: (hidden, dim), fc2: (dim, hidden)
//   SwiGLU: y = fc2(silu(fc1(x)) ⊙ fc_gate(x))        (Shazeer 2020, "GLU Variants Improve
//                                                       Transformer", arXiv 2002.05202)
//   nGPT:   y = fc2(silu(s_v·√C ⊙ fc1(x)) ⊙ (s_u ⊙ fc_gate(x)))     (Loshchilov et al. 2024,
//           arXiv 2410.01131: the paper's u = fc_gate(x), ν = fc1(x); C = dim). The inputs'
//           rows are unit vectors, so fc1(x) is a cosine; √C brings ν to where SiLU is not
//           linear. s_u, s_v (hidden) are learned, stored scaled (nn/ngpt.hpp). SwiGLU only.
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
  TAPEGRAD_ARG(bool, ngpt) = false;  // nGPT's scales s_u, s_v of the SwiGLU's two halves
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
  Tensor s_u, s_v;  // ngpt: s̃ of s_u and s_v, (hidden) each; undefined otherwise
};

}  // namespace tapegrad::nn
