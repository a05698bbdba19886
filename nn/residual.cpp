// residual.cpp — Residual.
#include "residual.hpp"

#include <sstream>

namespace tapegrad::nn {

Residual::Residual(std::shared_ptr<Norm> norm_, double alpha_, bool rezero_gate, DType dtype, std::shared_ptr<Norm> norm_out_,
                   std::int64_t eigen_dim)
    : Module("Residual"), alpha(alpha_) {
  if (norm_) norm = register_module("norm", norm_);
  if (norm_out_) norm_out = register_module("norm_out", norm_out_);
  if (rezero_gate) scale = register_parameter("scale", zeros({}, dtype));
  if (eigen_dim > 0) {
    eigen_lr_scaling = ngpt_eigen_lr(eigen_dim);
    eigen_lr = register_parameter("eigen_lr", full({eigen_dim}, eigen_lr_scaling.scale, dtype));
  }
}

std::string Residual::extra_repr() const {
  std::ostringstream os;
  os << (norm ? "norm" : "no norm");
  if (norm_out) os << ", output norm";
  if (alpha != 1.0) os << ", alpha=" << alpha;
  if (branch != 1.0) os << ", branch=" << branch;
  if (scale.defined()) os << ", rezero gate";
  if (eigen_lr.defined()) os << ", eigen learning rates";
  return os.str();
}

}  // namespace tapegrad::nn
