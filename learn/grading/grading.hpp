// grading.hpp — what an exercise's tests say when the student's code is wrong, in words a
// student reads: which derivative, at which index, what value against what.
//
//   TEST_CASE("∂L/∂a of a·b is b", "[learn.1]") {
//     LEARN_REQUIRE(learn::grading::close("∂L/∂a", a.grad(), b.data()));
//   }
//
// Each function returns "" when all is well, or the sentence to print. LEARN_REQUIRE fails the
// test with that sentence alone (no expression, no file and line: the learn reporter,
// reporter.cpp, prints the test's name and the sentence).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <tapegrad/tapegrad.hpp>

#include <catch2/catch.hpp>

#define LEARN_REQUIRE(sentence)                     \
  do {                                              \
    const std::string learn_sentence_ = (sentence); \
    if (!learn_sentence_.empty()) FAIL(learn_sentence_); \
  } while (false)
#define LEARN_CHECK(sentence)                       \
  do {                                              \
    const std::string learn_sentence_ = (sentence); \
    if (!learn_sentence_.empty()) FAIL_CHECK(learn_sentence_); \
  } while (false)

namespace learn::grading {

// A number as the messages print it: 4 significant digits by default ("0.3125", "-1.5e-07").
std::string num(double v, int digits = 4);
// "(1, 2)": the multi-index of element `flat` of a contiguous tensor of `shape`; "()" for a scalar.
std::string index_str(const tapegrad::Shape& shape, std::int64_t flat);

// "" when |got - want| <= atol + rtol·|want|, else "<what> is 0.31, it should be 0.29" (with more
// digits where four would print the two alike).
std::string close(const std::string& what, double got, double want, double rtol = 1e-9, double atol = 1e-12);

// Elementwise: "" when got matches want (same shape, every element close), else
// "<what> differs from <source> at index (1, 2): 0.31 against 0.29" (the worst element), or
// "<what> has shape [2, 3], it should be [3, 2]".
std::string tensors_close(const std::string& what, const tapegrad::Tensor& got, const tapegrad::Tensor& want,
                          const std::string& source, double rtol = 1e-9, double atol = 1e-12);

// The gradient test every tensor exercise runs: for L = Σ R ⊙ fn(inputs), with a fixed random R,
// dL/d(input) from backward() against central differences (L(x + eps) - L(x - eps)) / 2eps,
// element by element, in float64. "" when they agree, else
//   "∂L/∂x differs from the numerical derivative at index (1, 2): 0.31 against 0.29"
// naming the input by names[k], at its worst element. The inputs must be float64 leaves that
// require grad; fn may throw (a stub's Todo), and the exception goes on to the test.
std::string gradient_matches_numerical(const std::function<tapegrad::Tensor(const tapegrad::TensorList&)>& fn,
                                       const tapegrad::TensorList& inputs, const std::vector<std::string>& names,
                                       std::uint64_t seed = 1, double rtol = 1e-5, double atol = 1e-7);

// A two-input op, as the tensor exercises' tests call it: the student's or tapegrad's own.
using BinaryOp = std::function<tapegrad::Tensor(const tapegrad::Tensor&, const tapegrad::Tensor&)>;

// For L = Σ R ⊙ op(a, b): {dL/da, dL/db} by backward(), on fresh leaves with a's and b's values.
tapegrad::TensorList binary_gradients(const BinaryOp& op, const tapegrad::Tensor& a, const tapegrad::Tensor& b,
                                      const tapegrad::Tensor& r);

// The same L's gradients against want = {dL/da, dL/db} from another source (tapegrad's own op,
// PyTorch's reference values): "" when both agree, else the first difference in tensors_close's
// words, "dL/d<names[0]> differs from <source> at index (1, 2): 0.31 against 0.29".
std::string binary_gradients_match(const BinaryOp& op, const tapegrad::Tensor& a, const tapegrad::Tensor& b,
                                   const tapegrad::Tensor& r, const tapegrad::TensorList& want,
                                   const std::string& source, const std::vector<std::string>& names,
                                   double rtol = 1e-12, double atol = 1e-12);

// A reference case of a two-input op, as make_reference.py writes it into an exercise's
// reference.inc (learn/grading/reference.py): the inputs, the weights R of
// L = Σ R ⊙ op(a, b), and PyTorch's dL/da and dL/db.
struct BinaryCase {
  tapegrad::Shape a_shape;
  std::vector<double> a;
  tapegrad::Shape b_shape;
  std::vector<double> b;
  tapegrad::Shape r_shape;
  std::vector<double> r;
  std::vector<double> grad_a, grad_b;  // shaped like a and b
};

// binary_gradients_match on the case's values against PyTorch's gradients.
std::string matches_pytorch(const BinaryOp& op, const BinaryCase& reference, const std::vector<std::string>& names);

// dL/d(input) for L = Σ weights ⊙ fn(inputs), by backward() (each input's .grad reset first): the
// gradients to compare between the student's op and tapegrad's, or with PyTorch's (weights = g).
tapegrad::TensorList gradients(const std::function<tapegrad::Tensor(const tapegrad::TensorList&)>& fn,
                               const tapegrad::TensorList& inputs, const tapegrad::Tensor& weights);

// A float64 tensor of the shape with these values (a reference.inc's arrays).
tapegrad::Tensor float64(const std::vector<double>& values, const tapegrad::Shape& shape);

// A float64 leaf of the shape, random normal values, that requires grad.
tapegrad::Tensor leaf(const tapegrad::Shape& shape, tapegrad::Generator& gen);

}  // namespace learn::grading
