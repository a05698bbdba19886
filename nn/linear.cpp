// linear.cpp — Linear on the fused linear() op (one gemm with the transpose flag).
#include "linear.hpp"

#include <cmath>

#include "../autograd/ops.hpp"
#include "init.hpp"

namespace tapegrad::nn {

Linear::Linear(const LinearOptions& opts) : UnaryModule("Linear"), options(opts) {
  if (opts.in_features() < 0 || opts.out_features() < 0)
    throw ValueError("Linear: feature counts must be >= 0, got in_features=" + std::to_string(opts.in_features()) +
                     ", out_features=" + std::to_string(opts.out_features()));
  Tensor w = Tensor::empty({opts.out_features(), opts.in_features()}, opts.dtype());
  init::linear_default_(w);
  weight = register_parameter("weight", w);
  if (opts.bias()) {
    Tensor b = Tensor::empty({opts.out_features()}, opts.dtype());
    const double bound = opts.in_features() > 0 ? 1.0 / std::sqrt(double(opts.in_features())) : 0.0;
    init::uniform_(b, -bound, bound);
    bias = register_parameter("bias", b);
  }
}

Tensor Linear::forward(const Tensor& input) {
  Tensor x = input;
  ForwardCall call(*this, {&x});
  return call.output(linear(x, weight, bias));
}

std::string Linear::extra_repr() const {
  return "in_features=" + std::to_string(options.in_features()) + ", out_features=" +
         std::to_string(options.out_features()) + ", bias=" + (options.bias() ? "true" : "false");
}

}  // namespace tapegrad::nn
