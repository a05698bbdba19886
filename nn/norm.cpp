// norm.cpp — LayerNorm / RMSNorm modules on the fused layer_norm() / rms_norm() ops.
#include "norm.hpp"

#include <sstream>

#include "../autograd/ops.hpp"

namespace tapegrad::nn {

namespace {
void check_norm_options(const NormOptions& o, const char* name) {
  if (o.dim() <= 0) throw ValueError(std::string(name) + ": dim must be positive, got " + std::to_string(o.dim()));
  if (!(o.eps() > 0)) throw ValueError(std::string(name) + ": eps must be positive, got " + std::to_string(o.eps()));
}
std::string norm_repr(const NormOptions& o) {
  std::ostringstream os;
  os << "dim=" << o.dim() << ", eps=" << o.eps() << ", elementwise_affine=" << (o.elementwise_affine() ? "true" : "false");
  return os.str();
}
}  // namespace

LayerNorm::LayerNorm(const NormOptions& opts) : Norm("LayerNorm"), options(opts) {
  check_norm_options(opts, "LayerNorm");
  if (opts.elementwise_affine()) {
    weight = register_parameter("weight", ones({opts.dim()}, opts.dtype()));
    if (opts.bias()) bias = register_parameter("bias", zeros({opts.dim()}, opts.dtype()));
  }
}

Tensor LayerNorm::forward(const Tensor& input, const Tensor& condition) {
  Tensor x = input, cond = condition;  // cond is ignored
  ForwardCall call(*this, {&x, &cond});
  return call.output(layer_norm(x, {options.dim()}, weight, bias, options.eps()));
}

std::string LayerNorm::extra_repr() const { return norm_repr(options); }

RMSNorm::RMSNorm(const NormOptions& opts) : Norm("RMSNorm"), options(opts) {
  check_norm_options(opts, "RMSNorm");
  if (opts.elementwise_affine()) weight = register_parameter("weight", ones({opts.dim()}, opts.dtype()));
}

Tensor RMSNorm::forward(const Tensor& input, const Tensor& condition) {
  Tensor x = input, cond = condition;  // cond is ignored
  ForwardCall call(*this, {&x, &cond});
  return call.output(rms_norm(x, {options.dim()}, weight, options.eps()));
}

std::string RMSNorm::extra_repr() const { return norm_repr(options); }

}  // namespace tapegrad::nn
