// tensor_methods.cpp — PyTorch's Tensor methods (x.relu(), x[i], x.argmax(1), ...), each one
// line that calls the function of ops.hpp of the same name: one implementation, two spellings.
#include "ops.hpp"

namespace tapegrad {

Tensor Tensor::operator[](std::int64_t i) const { return tapegrad::select(*this, 0, i); }
Tensor Tensor::select(std::int64_t dim, std::int64_t index) const { return tapegrad::select(*this, dim, index); }
Tensor Tensor::slice(std::int64_t dim, std::int64_t start, std::int64_t end, std::int64_t step) const {
  return tapegrad::slice(*this, dim, start, end, step);
}
Tensor Tensor::narrow(std::int64_t dim, std::int64_t start, std::int64_t length) const {
  return tapegrad::narrow(*this, dim, start, length);
}
Tensor Tensor::flatten(std::int64_t start_dim, std::int64_t end_dim) const {
  return tapegrad::flatten(*this, start_dim, end_dim);
}
Tensor Tensor::unsqueeze(std::int64_t dim) const { return tapegrad::unsqueeze(*this, dim); }
Tensor Tensor::squeeze(std::int64_t dim) const { return tapegrad::squeeze(*this, dim); }
Tensor Tensor::sum(const Shape& dims, bool keepdim) const { return tapegrad::sum(*this, dims, keepdim); }
Tensor Tensor::mean(const Shape& dims, bool keepdim) const { return tapegrad::mean(*this, dims, keepdim); }
Tensor Tensor::relu() const { return tapegrad::relu(*this); }
Tensor Tensor::gelu() const { return tapegrad::gelu(*this); }
Tensor Tensor::silu() const { return tapegrad::silu(*this); }
Tensor Tensor::tanh() const { return tapegrad::tanh(*this); }
Tensor Tensor::sigmoid() const { return tapegrad::sigmoid(*this); }
Tensor Tensor::exp() const { return tapegrad::exp(*this); }
Tensor Tensor::log() const { return tapegrad::log(*this); }
Tensor Tensor::sqrt() const { return tapegrad::sqrt(*this); }
Tensor Tensor::rsqrt() const { return tapegrad::rsqrt(*this); }
Tensor Tensor::abs() const { return tapegrad::abs(*this); }
Tensor Tensor::neg() const { return tapegrad::neg(*this); }
Tensor Tensor::pow(double exponent) const { return tapegrad::pow(*this, exponent); }
Tensor Tensor::softmax(std::int64_t dim) const { return tapegrad::softmax(*this, dim); }
Tensor Tensor::log_softmax(std::int64_t dim) const { return tapegrad::log_softmax(*this, dim); }
Tensor Tensor::argmax(std::int64_t dim, bool keepdim) const { return tapegrad::argmax(*this, dim, keepdim); }
Tensor Tensor::argmax() const { return tapegrad::argmax(*this); }
Tensor Tensor::eq(const Tensor& other) const { return tapegrad::eq(*this, other); }
Tensor Tensor::ne(const Tensor& other) const { return tapegrad::ne(*this, other); }
Tensor Tensor::lt(const Tensor& other) const { return tapegrad::lt(*this, other); }
Tensor Tensor::le(const Tensor& other) const { return tapegrad::le(*this, other); }
Tensor Tensor::gt(const Tensor& other) const { return tapegrad::gt(*this, other); }
Tensor Tensor::ge(const Tensor& other) const { return tapegrad::ge(*this, other); }

}  // namespace tapegrad
