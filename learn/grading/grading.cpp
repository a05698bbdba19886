// grading.cpp — the sentences of grading.hpp.
#include "grading.hpp"

#include <cmath>
#include <cstdio>

namespace learn::grading {

using namespace tapegrad;

std::string num(double v, int digits) {
  char text[40];
  std::snprintf(text, sizeof text, "%.*g", digits, v);
  return text;
}

std::string index_str(const Shape& shape, std::int64_t flat) {
  const Shape index = unravel_index(flat, shape);
  std::string out = "(";
  for (std::size_t d = 0; d < index.size(); ++d) out += (d ? ", " : "") + std::to_string(index[d]);
  return out + ")";
}

namespace {

// "0.31 against 0.29", with as many digits as it takes to tell the two apart (a difference in the
// seventh digit printed as "-0.426 against -0.426" would tell the student nothing).
std::string against(double got, double want, const char* word = " against ") {
  int digits = 4;
  while (digits < 17 && num(got, digits) == num(want, digits)) ++digits;
  return num(got, digits) + word + num(want, digits);
}

}  // namespace

std::string close(const std::string& what, double got, double want, double rtol, double atol) {
  if (std::abs(got - want) <= atol + rtol * std::abs(want)) return "";
  return what + " is " + against(got, want, ", it should be ");
}

std::string tensors_close(const std::string& what, const Tensor& got, const Tensor& want, const std::string& source,
                          double rtol, double atol) {
  if (!got.defined()) return what + " is missing (an undefined tensor): nothing was computed";
  if (got.shape() != want.shape())
    return what + " has shape " + shape_str(got.shape()) + ", it should be " + shape_str(want.shape());
  const std::vector<double> g = got.contiguous().to_vector<double>(), w = want.contiguous().to_vector<double>();
  std::int64_t worst = -1;
  double worst_excess = 0;
  for (std::size_t i = 0; i < g.size(); ++i) {
    const double excess = std::abs(g[i] - w[i]) - (atol + rtol * std::abs(w[i]));
    if (std::isnan(g[i]) != std::isnan(w[i]) || excess > worst_excess) {
      worst = static_cast<std::int64_t>(i);
      worst_excess = std::isnan(excess) ? INFINITY : excess;
    }
  }
  if (worst < 0) return "";
  return what + " differs from " + source + " at index " + index_str(got.shape(), worst) + ": " +
         against(g[static_cast<std::size_t>(worst)], w[static_cast<std::size_t>(worst)]);
}

TensorList binary_gradients(const BinaryOp& op, const Tensor& a, const Tensor& b, const Tensor& r) {
  return gradients([&op](const TensorList& in) { return op(in[0], in[1]); },
                   {a.detach().clone().requires_grad_(), b.detach().clone().requires_grad_()}, r);
}

std::string binary_gradients_match(const BinaryOp& op, const Tensor& a, const Tensor& b, const Tensor& r,
                                   const TensorList& want, const std::string& source,
                                   const std::vector<std::string>& names, double rtol, double atol) {
  const TensorList got = binary_gradients(op, a, b, r);
  for (std::size_t k = 0; k < 2; ++k) {
    const std::string mismatch = tensors_close("dL/d" + names.at(k), got[k], want.at(k), source, rtol, atol);
    if (!mismatch.empty()) return mismatch;
  }
  return "";
}

std::string matches_pytorch(const BinaryOp& op, const BinaryCase& reference, const std::vector<std::string>& names) {
  const auto t = [](const std::vector<double>& values, const Shape& shape) {
    return tensor(values, shape, DType::float64);
  };
  return binary_gradients_match(op, t(reference.a, reference.a_shape), t(reference.b, reference.b_shape),
                                t(reference.r, reference.r_shape),
                                {t(reference.grad_a, reference.a_shape), t(reference.grad_b, reference.b_shape)},
                                "PyTorch's", names);
}

TensorList gradients(const std::function<Tensor(const TensorList&)>& fn, const TensorList& inputs,
                     const Tensor& weights) {
  for (Tensor x : inputs) x.reset_grad();  // a handle: the leaf itself is reset
  sum(mul(fn(inputs), weights)).backward();
  TensorList out;
  for (const Tensor& x : inputs) out.push_back(x.grad());
  return out;
}

Tensor float64(const std::vector<double>& values, const Shape& shape) { return tensor(values, shape, DType::float64); }

Tensor leaf(const Shape& shape, Generator& gen) { return randn(shape, gen, DType::float64).requires_grad_(); }

std::string gradient_matches_numerical(const std::function<Tensor(const TensorList&)>& fn, const TensorList& inputs,
                                       const std::vector<std::string>& names, std::uint64_t seed, double rtol,
                                       double atol) {
  // L = Σ R ⊙ fn(inputs): a scalar whose gradient is every output's, weighted at random, so a
  // wrong entry anywhere in the Jacobian shows
  Tensor R;
  {
    NoGradGuard no_grad;
    Generator gen(seed);
    const Tensor y = fn(inputs);
    R = randn(y.shape(), gen, DType::float64);
  }
  const auto loss = [&](const TensorList& in) { return sum(mul(fn(in), R)); };
  for (Tensor x : inputs) x.reset_grad();  // a handle: the leaf itself is reset
  loss(inputs).backward();
  constexpr double eps = 1e-6;
  for (std::size_t k = 0; k < inputs.size(); ++k) {
    const std::string name = k < names.size() ? names[k] : "input " + std::to_string(k);
    const Tensor& x = inputs[k];
    if (!x.grad().defined()) return "∂L/∂" + name + " is missing: backward() gave " + name + " no gradient";
    Tensor numerical = zeros_like(x);
    {
      NoGradGuard no_grad;
      double* values = x.data<double>();
      double* out = numerical.data<double>();
      for (std::int64_t i = 0; i < x.numel(); ++i) {
        const double saved = values[i];
        values[i] = saved + eps;
        const double up = loss(inputs).item();
        values[i] = saved - eps;
        const double down = loss(inputs).item();
        values[i] = saved;
        out[i] = (up - down) / (2 * eps);
      }
    }
    const std::string mismatch = tensors_close("∂L/∂" + name, x.grad(), numerical, "the numerical derivative", rtol, atol);
    if (!mismatch.empty()) return mismatch;
  }
  return "";
}

}  // namespace learn::grading
