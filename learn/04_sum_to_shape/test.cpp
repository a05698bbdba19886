// The properties exercise 4 is graded on (tag [learn.04]): sum_to_shape on hand cases (a
// leading dim added, a size-1 dim stretched, both, down to 0-d), then on random broadcastable
// shape pairs against tapegrad's own sum_to_shape and PyTorch's sum_to_size; part 2, the
// backward of a broadcasting add and mul, against the numerical derivative, tapegrad's add and
// mul and PyTorch (reference.inc, made by make_reference.py).
#include <random>

#include "04_sum_to_shape/exercise.hpp"
#include "grading/grading.hpp"

using learn::add_op;
using learn::mul_op;
using learn::grading::binary_gradients;
using learn::grading::binary_gradients_match;
using learn::grading::gradient_matches_numerical;
using learn::grading::leaf;
using learn::grading::matches_pytorch;
using learn::grading::tensors_close;
using tapegrad::DType;
using tapegrad::Shape;
using tapegrad::shape_str;
using tapegrad::Tensor;
using tapegrad::TensorList;

namespace {

// A gradient, the shape it is summed to, and PyTorch's grad.sum_to_size(shape) (reference.inc).
struct SumCase {
  Shape grad_shape;
  std::vector<double> grad;
  Shape shape;
  std::vector<double> want;
};

#include "reference.inc"

Tensor values(const std::vector<double>& v, const Shape& shape) { return tapegrad::tensor(v, shape, DType::float64); }

// 1, 2, ..., n in the shape: sums a reader can do by hand
Tensor counting(const Shape& shape) {
  Tensor t = tapegrad::zeros(shape, DType::float64);
  for (std::int64_t i = 0; i < t.numel(); ++i) t.data<double>()[i] = static_cast<double>(i + 1);
  return t;
}

// "sum_to_shape(grad [2, 3], [3])"
std::string call(const Tensor& grad, const Shape& shape) {
  return "sum_to_shape(grad " + shape_str(grad.shape()) + ", " + shape_str(shape) + ")";
}

// A shape that broadcasts to `out`: some leading dims dropped, some of the others set to 1.
Shape broadcastable_to(const Shape& out, std::mt19937& rng) {
  const std::size_t lead = std::uniform_int_distribution<std::size_t>(0, out.size())(rng);
  Shape shape(out.begin() + static_cast<std::ptrdiff_t>(lead), out.end());
  for (std::int64_t& size : shape)
    if (std::uniform_int_distribution<int>(0, 2)(rng) == 0) size = 1;
  return shape;
}

// A random output shape of 0 to 4 dims, sizes 1 to 4.
Shape random_shape(std::mt19937& rng) {
  Shape out(std::uniform_int_distribution<std::size_t>(0, 4)(rng));
  for (std::int64_t& size : out) size = std::uniform_int_distribution<std::int64_t>(1, 4)(rng);
  return out;
}

// "with a [2, 1, 3], b [4, 1]: <why>", or "" when why is "".
std::string with_shapes(const Tensor& a, const Tensor& b, const std::string& why) {
  return why.empty() ? "" : "with a " + shape_str(a.shape()) + ", b " + shape_str(b.shape()) + ": " + why;
}

// tapegrad's own ops, whose gradients add_op's and mul_op's must equal (add and mul are overloaded)
Tensor tapegrad_add(const Tensor& a, const Tensor& b) { return tapegrad::add(a, b); }
Tensor tapegrad_mul(const Tensor& a, const Tensor& b) { return tapegrad::mul(a, b); }

// Pairs that broadcast in each way: a leading dim, size-1 dims on both sides, a 0-d input.
const std::vector<std::pair<Shape, Shape>> kPairs = {
    {{2, 3}, {3}}, {{2, 1, 3}, {4, 1}}, {{3, 1}, {1, 4}}, {{}, {2, 3}}, {{2, 3}, {2, 3}}};

}  // namespace

TEST_CASE("a gradient that already has the input's shape comes back as it is: [2, 3] to [2, 3]", "[learn.04]") {
  const Tensor grad = counting({2, 3});
  LEARN_CHECK(tensors_close(call(grad, {2, 3}), learn::sum_to_shape(grad, {2, 3}), grad, "grad itself (nothing to sum)"));
}

TEST_CASE("[2, 3] to [3]: the leading dim that broadcasting added is summed away", "[learn.04]") {
  const Tensor grad = counting({2, 3});  // [[1, 2, 3], [4, 5, 6]]
  LEARN_CHECK(tensors_close(call(grad, {3}) + " of [[1, 2, 3], [4, 5, 6]]", learn::sum_to_shape(grad, {3}),
                            values({5, 7, 9}, {3}), "the column sums [5, 7, 9]"));
}

TEST_CASE("[2, 3] to [2, 1]: a dim of size 1 stretched to 3 is summed, and kept as size 1", "[learn.04]") {
  const Tensor grad = counting({2, 3});
  LEARN_CHECK(tensors_close(call(grad, {2, 1}) + " of [[1, 2, 3], [4, 5, 6]]", learn::sum_to_shape(grad, {2, 1}),
                            values({6, 15}, {2, 1}), "the row sums [[6], [15]]"));
}

TEST_CASE("[2, 4, 3] to [4, 1]: both at once, dim 0 summed away and the last dim summed into size 1", "[learn.04]") {
  const Tensor grad = counting({2, 4, 3});  // 1 to 24
  // want[j][0] = Σ_i Σ_l grad[i][j][l], by hand: element (i, j, l) is 12 i + 3 j + l + 1
  std::vector<double> want(4, 0.0);
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 4; ++j)
      for (int l = 0; l < 3; ++l) want[static_cast<std::size_t>(j)] += 12 * i + 3 * j + l + 1;
  LEARN_CHECK(tensors_close(call(grad, {4, 1}) + " of 1 to 24", learn::sum_to_shape(grad, {4, 1}), values(want, {4, 1}),
                            "the sums over dims 0 and 2 [[45], [63], [81], [99]]"));
}

TEST_CASE("to a 0-d shape []: everything is summed into one number (and a 0-d gradient stays as it is)",
          "[learn.04]") {
  const Tensor grad = counting({2, 3});
  LEARN_CHECK(tensors_close(call(grad, {}) + " of [[1, 2, 3], [4, 5, 6]]", learn::sum_to_shape(grad, {}),
                            tapegrad::scalar_tensor(21, DType::float64), "the sum of all, 21"));
  const Tensor scalar = tapegrad::scalar_tensor(2.5, DType::float64);
  LEARN_CHECK(tensors_close(call(scalar, {}), learn::sum_to_shape(scalar, {}), scalar, "grad itself"));
}

TEST_CASE("summing loses nothing: the result adds up to what the gradient adds up to, on random shape pairs",
          "[learn.04]") {
  std::mt19937 rng(GENERATE(take(10, random(0u, 1000000u))));
  tapegrad::Generator gen(rng());
  const Shape out = random_shape(rng), shape = broadcastable_to(out, rng);
  const Tensor grad = tapegrad::randn(out, gen, DType::float64);
  const Tensor got = learn::sum_to_shape(grad, shape);
  LEARN_REQUIRE(got.defined() ? "" : call(grad, shape) + " returned an undefined tensor");
  LEARN_CHECK(learn::grading::close("the total of " + call(grad, shape), tapegrad::sum(got).item(),
                                      tapegrad::sum(grad).item(), 1e-9, 1e-9));
}

TEST_CASE("sum_to_shape equals tapegrad's own, on random broadcastable shape pairs", "[learn.04]") {
  std::mt19937 rng(GENERATE(take(20, random(0u, 1000000u))));
  tapegrad::Generator gen(rng());
  const Shape out = random_shape(rng), shape = broadcastable_to(out, rng);
  const Tensor grad = tapegrad::randn(out, gen, DType::float64);
  LEARN_CHECK(tensors_close(call(grad, shape), learn::sum_to_shape(grad, shape), tapegrad::sum_to_shape(grad, shape),
                            "tapegrad's sum_to_shape", 1e-12, 1e-12));
}

TEST_CASE("sum_to_shape equals PyTorch's sum_to_size: [2, 4, 3] to [4, 1] and [5, 2, 4, 3] to [2, 1, 3]",
          "[learn.04]") {
  for (const SumCase* c : {&to_4_1, &to_2_1_3}) {
    const Tensor grad = values(c->grad, c->grad_shape);
    LEARN_CHECK(tensors_close(call(grad, c->shape), learn::sum_to_shape(grad, c->shape), values(c->want, c->shape),
                              "PyTorch's sum_to_size", 1e-12, 1e-12));
  }
}

// ---- part 2: the backward of a broadcasting add and mul

TEST_CASE("part 2: a + b's backward with dout all ones gives each value the number of outputs it reached, "
          "in its input's shape: a [2, 1, 3] + b [4, 1] is [2, 4, 3]",
          "[learn.04]") {
  tapegrad::Generator gen(8);
  const Tensor a = leaf({2, 1, 3}, gen), b = leaf({4, 1}, gen);
  const Tensor out = add_op(a, b);
  const TensorList grads = out.grad_fn()->apply(tapegrad::ones_like(out));  // the backward, as the engine calls it
  LEARN_REQUIRE(grads.size() == 2 ? "" : "the backward returned " + std::to_string(grads.size()) +
                                             " gradients, it should return 2: {dL/da, dL/db}");
  // with dout all ones, each input's gradient counts the output positions it reached
  LEARN_CHECK(tensors_close("dL/da of sum(a + b)", grads[0], tapegrad::full({2, 1, 3}, 4.0, DType::float64),
                            "4 everywhere (each a[i, 0, l] is added to 4 outputs)"));
  LEARN_CHECK(tensors_close("dL/db of sum(a + b)", grads[1], tapegrad::full({4, 1}, 6.0, DType::float64),
                            "6 everywhere (each b[j, 0] is added to 2 · 3 outputs)"));
}

TEST_CASE("part 2: add's and mul's gradients match the numerical derivative, on pairs that broadcast each way",
          "[learn.04]") {
  const auto [a_shape, b_shape] = GENERATE(from_range(kPairs));
  tapegrad::Generator gen(a_shape.size() * 10 + b_shape.size());
  const Tensor a = leaf(a_shape, gen), b = leaf(b_shape, gen);
  LEARN_CHECK(with_shapes(a, b, gradient_matches_numerical(
                                    [](const TensorList& in) { return add_op(in[0], in[1]); }, {a, b}, {"a", "b"})));
  LEARN_CHECK(with_shapes(a, b, gradient_matches_numerical(
                                    [](const TensorList& in) { return mul_op(in[0], in[1]); }, {a, b}, {"a", "b"})));
}

TEST_CASE("part 2: add's and mul's gradients equal tapegrad's add and mul's, on random broadcastable pairs",
          "[learn.04]") {
  std::mt19937 rng(GENERATE(take(15, random(0u, 1000000u))));
  tapegrad::Generator gen(rng());
  const Shape out = random_shape(rng);
  const Tensor a = leaf(broadcastable_to(out, rng), gen), b = leaf(broadcastable_to(out, rng), gen);
  const Tensor r = tapegrad::randn(tapegrad::add(a, b).shape(), gen, DType::float64);
  LEARN_CHECK(with_shapes(a, b, binary_gradients_match(add_op, a, b, r, binary_gradients(tapegrad_add, a, b, r),
                                                       "tapegrad's add's", {"a", "b"})));
  LEARN_CHECK(with_shapes(a, b, binary_gradients_match(mul_op, a, b, r, binary_gradients(tapegrad_mul, a, b, r),
                                                       "tapegrad's mul's", {"a", "b"})));
}

TEST_CASE("part 2: the gradients equal PyTorch's: a [2, 1, 3] + b [4, 1], a [3, 1] * b [2, 1, 4], a [] * b [2, 3]",
          "[learn.04]") {
  LEARN_CHECK(matches_pytorch(add_op, add_2_1_3_and_4_1, {"a of a + b", "b of a + b"}));
  LEARN_CHECK(matches_pytorch(mul_op, mul_3_1_and_2_1_4, {"a of a * b", "b of a * b"}));
  LEARN_CHECK(matches_pytorch(mul_op, mul_0d_and_2_3, {"a of a * b", "b of a * b"}));
}
