// activation.cpp — names and dispatch of the activations.
#include "activation.hpp"

#include "../autograd/ops.hpp"

namespace tapegrad::nn {

std::string activation_name(Activation a) {
  switch (a) {
    case Activation::relu: return "relu";
    case Activation::gelu: return "gelu";
    case Activation::gelu_tanh: return "gelu_tanh";
    case Activation::silu: return "silu";
    case Activation::tanh: return "tanh";
    case Activation::swiglu: return "swiglu";
  }
  return "?";
}

Activation activation_from_name(const std::string& name) {
  for (Activation a : {Activation::relu, Activation::gelu, Activation::gelu_tanh, Activation::silu,
                       Activation::tanh, Activation::swiglu})
    if (activation_name(a) == name) return a;
  throw ValueError("unknown activation '" + name + "' (expected relu, gelu, gelu_tanh, silu, tanh or swiglu)");
}

Tensor apply_activation(Activation a, const Tensor& x) {
  switch (a) {
    case Activation::relu: return relu(x);
    case Activation::gelu: return gelu(x);
    case Activation::gelu_tanh: return gelu(x, "tanh");
    case Activation::silu: return silu(x);
    case Activation::tanh: return tanh(x);
    case Activation::swiglu: break;
  }
  throw ValueError("apply_activation: swiglu is not elementwise; use FeedForward");
}

Tensor Act::forward(const Tensor& input) {
  Tensor x = input;
  ForwardCall call(*this, {&x});
  return call.output(apply_activation(activation, x));
}

Act::Act(Activation a) : Act(a, "Act") {}

Act::Act(Activation a, std::string type_name) : UnaryModule(std::move(type_name)), activation(a) {
  if (a == Activation::swiglu) throw ValueError("Act: swiglu is not elementwise; use FeedForward");
}

}  // namespace tapegrad::nn
