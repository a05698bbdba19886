// feed_forward.cpp — FeedForward.
#include "feed_forward.hpp"

#include "../autograd/ops.hpp"

namespace tapegrad::nn {

FeedForward::FeedForward(const FeedForwardOptions& o) : UnaryModule("FeedForward"), options(o) {
  if (o.dim() <= 0 || o.hidden() <= 0)
    throw ValueError("FeedForward: dim and hidden must be positive, got " + std::to_string(o.dim()) + " and " +
                     std::to_string(o.hidden()));
  fc1 = register_module("fc1", std::make_shared<Linear>(LinearOptions(o.dim(), o.hidden()).bias(o.bias()).dtype(o.dtype())));
  if (o.activation() == Activation::swiglu)
    fc_gate = register_module("fc_gate", std::make_shared<Linear>(LinearOptions(o.dim(), o.hidden()).bias(o.bias()).dtype(o.dtype())));
  fc2 = register_module("fc2", std::make_shared<Linear>(LinearOptions(o.hidden(), o.dim()).bias(o.bias()).dtype(o.dtype())));
  drop = register_module("drop", std::make_shared<Dropout>(o.dropout()));
}

Tensor FeedForward::forward(const Tensor& input) {
  Tensor x = input;
  ForwardCall call(*this, {&x});
  const Tensor h = options.activation() == Activation::swiglu ? mul(silu(fc1->forward(x)), fc_gate->forward(x))
                                                               : apply_activation(options.activation(), fc1->forward(x));
  return call.output(drop->forward(fc2->forward(h)));
}

std::string FeedForward::extra_repr() const {
  return "dim=" + std::to_string(options.dim()) + ", hidden=" + std::to_string(options.hidden()) +
         ", activation=" + activation_name(options.activation());
}

}  // namespace tapegrad::nn
