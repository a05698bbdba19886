// dropout.hpp — Dropout(p): in training, zero each element with probability p and scale
// the rest by 1/(1-p); in eval mode, the identity.
#pragma once

#include "../autograd/random.hpp"
#include "module.hpp"

namespace tapegrad::nn {

class Dropout : public UnaryModule {
 public:
  explicit Dropout(double p = 0.5, Generator* gen = nullptr);
  Tensor forward(const Tensor& x) override;
  std::string extra_repr() const override;

  double p;
  Generator* gen;  // the default generator when null
};

}  // namespace tapegrad::nn
