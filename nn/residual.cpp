// residual.cpp — Residual.
#include "residual.hpp"

#include <sstream>

namespace tapegrad::nn {

Residual::Residual(std::shared_ptr<Norm> norm_, double alpha_, bool rezero_gate, DType dtype, std::shared_ptr<Norm> norm_out_)
    : Module("Residual"), alpha(alpha_) {
  if (norm_) norm = register_module("norm", norm_);
  if (norm_out_) norm_out = register_module("norm_out", norm_out_);
  if (rezero_gate) scale = register_parameter("scale", zeros({}, dtype));
}

std::string Residual::extra_repr() const {
  std::ostringstream os;
  os << (norm ? "norm" : "no norm");
  if (norm_out) os << ", output norm";
  if (alpha != 1.0) os << ", alpha=" << alpha;
  if (branch != 1.0) os << ", branch=" << branch;
  if (scale.defined()) os << ", rezero gate";
  return os.str();
}

}  // namespace tapegrad::nn
