// The properties exercise 6 is graded on (tag [learn.06]): softmax's and log_softmax's values
// against PyTorch's, rows that sum to 1, stability at ±1000, the backward against PyTorch's and
// against central differences on random shapes, and agreement with tapegrad's own ops.
#include <cmath>

#include "06_softmax/exercise.hpp"
#include "grading/grading.hpp"

using namespace tapegrad;
using namespace learn::grading;  // the sentences: tensors_close, gradient_matches_numerical, ...

namespace reference {
#include "reference.inc"
}

namespace {

const Tensor& x_reference() {
  static const Tensor x = float64(reference::x, reference::x_shape);
  return x;
}

// "" when every element is finite, else the sentence on overflow
std::string finite(const std::string& what, const Tensor& t) {
  const std::vector<double> v = t.contiguous().to_vector<double>();
  for (std::size_t i = 0; i < v.size(); ++i)
    if (!std::isfinite(v[i]))
      return what + " is " + learn::grading::num(v[i]) + " at index " +
             learn::grading::index_str(t.shape(), static_cast<std::int64_t>(i)) +
             ": exp(1000) overflows a double (anything past exp(709.8) is inf, and inf / inf is nan). "
             "Subtract each row's max before exp: softmax(x) = softmax(x - max), whose exponents are all <= 0";
  return "";
}

Shape random_shape() {
  return GENERATE(values<Shape>({{5}, {3, 4}, {2, 3, 6}, {4, 1}, {1, 9}}));
}

}  // namespace

TEST_CASE("softmax's values match PyTorch's (a 4 x 4 example)", "[learn.06]") {
  LEARN_CHECK(tensors_close("softmax(x)", learn::softmax(x_reference()),
                            float64(reference::softmax, reference::softmax_shape), "PyTorch's"));
}

TEST_CASE("log_softmax's values match PyTorch's (a 4 x 4 example)", "[learn.06]") {
  LEARN_CHECK(tensors_close("log_softmax(x)", learn::log_softmax(x_reference()),
                            float64(reference::log_softmax, reference::log_softmax_shape), "PyTorch's"));
}

TEST_CASE("each row of softmax sums to 1, and exp(log_softmax) is softmax (random shapes)", "[learn.06]") {
  const Shape shape = random_shape();
  Generator gen(GENERATE(take(2, random(1, 1000))));
  const Tensor x = randn(shape, gen, DType::float64) * 3.0;
  const Tensor y = learn::softmax(x);
  LEARN_CHECK(tensors_close("the sum of each row of softmax(x), x of shape " + shape_str(shape),
                            sum(y, {-1}), ones(Shape(shape.begin(), shape.end() - 1), DType::float64), "1"));
  LEARN_CHECK(tensors_close("exp(log_softmax(x)), x of shape " + shape_str(shape), exp(learn::log_softmax(x)), y,
                            "softmax(x)"));
}

TEST_CASE("inputs of +-1000 give finite, correct values (the max is subtracted)", "[learn.06]") {
  // softmax and log_softmax of each row equal those of (0, -1, -2)
  const Tensor x = float64({1000, 999, 998, -1000, -1001, -1002}, {2, 3});
  const Tensor e = exp(float64({0, -1, -2}, {1, 3}));
  const Tensor want = expand(e / sum(e), {2, 3});
  const Tensor y = learn::softmax(x);
  LEARN_REQUIRE(finite("softmax of the rows (1000, 999, 998) and (-1000, -1001, -1002)", y));
  LEARN_CHECK(tensors_close("softmax of the rows (1000, 999, 998) and (-1000, -1001, -1002)", y, want,
                            "softmax of (0, -1, -2)"));
  const Tensor z = learn::log_softmax(x);
  LEARN_REQUIRE(finite("log_softmax of the rows (1000, 999, 998) and (-1000, -1001, -1002)", z));
  LEARN_CHECK(tensors_close("log_softmax of the rows (1000, 999, 998) and (-1000, -1001, -1002)", z, log(want),
                            "log_softmax of (0, -1, -2)", 1e-9, 1e-9));
}

TEST_CASE("softmax's backward matches PyTorch's gradient (L = sum of g * softmax(x))", "[learn.06]") {
  const Tensor x = x_reference().clone().requires_grad_();
  const Tensor g = float64(reference::g, reference::g_shape);
  const TensorList dx = gradients([](const TensorList& in) { return learn::softmax(in[0]); }, {x}, g);
  LEARN_CHECK(tensors_close("dL/dx", dx[0], float64(reference::softmax_dx, reference::softmax_dx_shape), "PyTorch's"));
}

TEST_CASE("log_softmax's backward matches PyTorch's gradient (L = sum of g * log_softmax(x))", "[learn.06]") {
  const Tensor x = x_reference().clone().requires_grad_();
  const Tensor g = float64(reference::g, reference::g_shape);
  const TensorList dx = gradients([](const TensorList& in) { return learn::log_softmax(in[0]); }, {x}, g);
  LEARN_CHECK(tensors_close("dL/dx", dx[0], float64(reference::log_softmax_dx, reference::log_softmax_dx_shape),
                            "PyTorch's"));
}

TEST_CASE("both gradients match the numerical derivative (random shapes)", "[learn.06]") {
  const Shape shape = random_shape();
  Generator gen(GENERATE(take(2, random(1, 1000))));
  const Tensor x = learn::grading::leaf(shape, gen);
  LEARN_CHECK(gradient_matches_numerical([](const TensorList& in) { return learn::softmax(in[0]); }, {x},
                                         {"x of softmax(x), x of shape " + shape_str(shape)}));
  LEARN_CHECK(gradient_matches_numerical([](const TensorList& in) { return learn::log_softmax(in[0]); }, {x},
                                         {"x of log_softmax(x), x of shape " + shape_str(shape)}));
}

TEST_CASE("values and gradients agree with tapegrad's softmax and log_softmax (random shapes)", "[learn.06]") {
  const Shape shape = random_shape();
  Generator gen(GENERATE(take(2, random(1, 1000))));
  const Tensor x = learn::grading::leaf(shape, gen);
  const Tensor weights = randn(shape, gen, DType::float64);
  const std::string of = ", x of shape " + shape_str(shape);
  const auto mine = [](const TensorList& in) { return learn::softmax(in[0]); };
  const auto theirs = [](const TensorList& in) { return tapegrad::softmax(in[0], -1); };
  LEARN_CHECK(tensors_close("softmax(x)" + of, mine({x}), theirs({x}), "tapegrad's softmax"));
  LEARN_CHECK(tensors_close("softmax's dL/dx" + of, gradients(mine, {x}, weights)[0], gradients(theirs, {x}, weights)[0],
                            "tapegrad's"));
  const auto mine_log = [](const TensorList& in) { return learn::log_softmax(in[0]); };
  const auto theirs_log = [](const TensorList& in) { return tapegrad::log_softmax(in[0], -1); };
  LEARN_CHECK(tensors_close("log_softmax(x)" + of, mine_log({x}), theirs_log({x}), "tapegrad's log_softmax"));
  LEARN_CHECK(tensors_close("log_softmax's dL/dx" + of, gradients(mine_log, {x}, weights)[0],
                            gradients(theirs_log, {x}, weights)[0], "tapegrad's"));
}
