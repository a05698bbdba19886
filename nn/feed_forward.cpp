// feed_forward.cpp — FeedForward.
#include "feed_forward.hpp"

#include <cmath>

#include "../autograd/anomaly.hpp"
#include "../autograd/ops.hpp"
#include "ngpt.hpp"

namespace tapegrad::nn {

FeedForward::FeedForward(const FeedForwardOptions& o) : UnaryModule("FeedForward"), options(o) {
  if (o.dim() <= 0 || o.hidden() <= 0)
    throw ValueError("FeedForward: dim and hidden must be positive, got " + std::to_string(o.dim()) + " and " +
                     std::to_string(o.hidden()));
  if (o.ngpt() && (o.activation() != Activation::swiglu || o.bias()))
    throw ValueError("FeedForward: ngpt scales the two halves of a SwiGLU with no bias (nGPT's matrices are unit "
                     "vectors along dim), got activation " + activation_name(o.activation()) +
                     (o.bias() ? " with bias" : ""));
  fc1 = register_module("fc1", std::make_shared<Linear>(LinearOptions(o.dim(), o.hidden()).bias(o.bias()).dtype(o.dtype())));
  if (o.activation() == Activation::swiglu)
    fc_gate = register_module("fc_gate", std::make_shared<Linear>(LinearOptions(o.dim(), o.hidden()).bias(o.bias()).dtype(o.dtype())));
  fc2 = register_module("fc2", std::make_shared<Linear>(LinearOptions(o.hidden(), o.dim()).bias(o.bias()).dtype(o.dtype())));
  drop = register_module("drop", std::make_shared<Dropout>(o.dropout()));
  if (o.ngpt()) {
    s_u = register_parameter("s_u", full({o.hidden()}, ngpt_s_uv().scale, o.dtype()));
    s_v = register_parameter("s_v", full({o.hidden()}, ngpt_s_uv().scale, o.dtype()));
  }
}

Tensor FeedForward::forward(const Tensor& input) {
  Tensor x = input;
  ForwardCall call(*this, {&x});
  // GELU's two forms run as one fused op that keeps a quarter less for the backward (gelu_mlp:
  // the same numbers). The layers run one by one instead when fc1 or fc2 has hooks, so that the
  // hooks fire, and in anomaly mode, so that a NaN is traced to fc1, the GELU or fc2.
  const Activation act = options.activation();
  if (fuses(act) && !fc1->has_forward_hooks() && !fc2->has_forward_hooks() && !is_anomaly_enabled())
    return call.output(drop->forward(
        gelu_mlp(x, fc1->weight, fc1->bias, fc2->weight, fc2->bias, act == Activation::gelu_tanh ? "tanh" : "none")));
  if (options.ngpt()) {  // u = s_u ⊙ fc_gate(x), ν = s_v·√C ⊙ fc1(x): y = fc2(silu(ν) ⊙ u)
    const double factor = ngpt_s_uv().factor();
    const Tensor u = mul(fc_gate->forward(x), mul(s_u, factor));
    const Tensor v = mul(fc1->forward(x), mul(s_v, factor * std::sqrt(static_cast<double>(options.dim()))));
    return call.output(drop->forward(fc2->forward(mul(silu(v), u))));
  }
  const Tensor h = options.activation() == Activation::swiglu ? mul(silu(fc1->forward(x)), fc_gate->forward(x))
                                                               : apply_activation(options.activation(), fc1->forward(x));
  return call.output(drop->forward(fc2->forward(h)));
}

std::string FeedForward::extra_repr() const {
  return "dim=" + std::to_string(options.dim()) + ", hidden=" + std::to_string(options.hidden()) +
         ", activation=" + activation_name(options.activation()) + (options.ngpt() ? ", ngpt" : "");
}

}  // namespace tapegrad::nn
