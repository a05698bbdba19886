// dropout.cpp — Dropout module on the dropout() op.
#include "dropout.hpp"

#include <sstream>

#include "../autograd/ops.hpp"

namespace tapegrad::nn {

Dropout::Dropout(double p_, Generator* gen_) : UnaryModule("Dropout"), p(p_), gen(gen_) {
  if (!(p >= 0 && p < 1)) throw ValueError("Dropout: p must be in [0, 1), got " + std::to_string(p));
}

std::string Dropout::extra_repr() const {
  std::ostringstream os;
  os << "p=" << p;
  return os.str();
}

Tensor Dropout::forward(const Tensor& input) {
  Tensor x = input;
  ForwardCall call(*this, {&x});
  return call.output(dropout(x, p, is_training(), gen));
}

}  // namespace tapegrad::nn
