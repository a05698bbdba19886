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
  std::string extra_repr() const override { return type_name() == "Act" ? activation_name(activation) : ""; }
  Activation activation;

 protected:
  Act(Activation a, std::string type_name);  // the named forms below print as PyTorch's
};

// PyTorch's names for the same modules: Sequential(Linear, ReLU, Linear) reads as in Python.
class ReLU : public Act {
 public:
  ReLU() : Act(Activation::relu, "ReLU") {}
};
class GELU : public Act {
 public:
  GELU() : Act(Activation::gelu, "GELU") {}
};
class SiLU : public Act {
 public:
  SiLU() : Act(Activation::silu, "SiLU") {}
};
class Tanh : public Act {
 public:
  Tanh() : Act(Activation::tanh, "Tanh") {}
};

}  // namespace tapegrad::nn
