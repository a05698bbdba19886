// activation.hpp — activation functions as modules (for Sequential), and the Activation
// enum that FeedForward and the transformer configs use.
#pragma once

#include <string>

#include "module.hpp"

namespace tapegrad::nn {

enum class Activation { relu, gelu, gelu_tanh, silu, tanh, swiglu };

// "relu", "gelu", "gelu_tanh", "silu", "tanh", "swiglu"
std::string activation_name(Activation a);
Activation activation_from_name(const std::string& name);
// Applies an elementwise activation (not swiglu, which needs two inputs).
Tensor apply_activation(Activation a, const Tensor& x);

// One module for every elementwise activation: Sequential{Linear, Act(Activation::gelu), ...}
class Act : public UnaryModule {
 public:
  explicit Act(Activation a);
  Tensor forward(const Tensor& x) override;
  std::string extra_repr() const override { return activation_name(activation); }
  Activation activation;
};

}  // namespace tapegrad::nn
