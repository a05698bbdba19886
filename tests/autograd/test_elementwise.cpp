// test_elementwise.cpp — closed-form values of the elementwise, unary and reduction ops,
// broadcasting edge shapes, and their error messages.
#include <cmath>

#include <catch2/catch.hpp>
#include <tapegrad/tapegrad.hpp>

using namespace tapegrad;
using Catch::Contains;
using Values = std::vector<double>;

TEST_CASE("binary ops broadcast like NumPy", "[elementwise]") {
  Tensor col = tensor({1, 2}, {2, 1}, DType::float64);
  Tensor row = tensor({10, 20, 30}, {3}, DType::float64);
  CHECK((col + row).shape() == Shape{2, 3});
  CHECK((col + row).to_vector() == Values{11, 21, 31, 12, 22, 32});
  CHECK((row - col).to_vector() == Values{9, 19, 29, 8, 18, 28});
  CHECK((col * row).to_vector() == Values{10, 20, 30, 20, 40, 60});
  CHECK((row / col).to_vector() == Values{10, 20, 30, 5, 10, 15});
  CHECK(pow(col, row / 10.0).to_vector() == Values{1, 1, 1, 2, 4, 8});
  CHECK((2.0 - col).to_vector() == Values{1, 0});
  CHECK((6.0 / col).to_vector() == Values{6, 3});
  CHECK((-col).to_vector() == Values{-1, -2});
  // A transposed (non-contiguous) operand is read through its strides.
  Tensor m = tensor({1, 2, 3, 4, 5, 6}, {2, 3}, DType::float64);
  CHECK((m.transpose(0, 1) + tensor({0, 100}, {2}, DType::float64)).to_vector() ==
        Values{1, 104, 2, 105, 3, 106});
  // Empty tensors broadcast to empty results.
  CHECK((zeros({0, 3}) + zeros({3})).shape() == Shape{0, 3});
}

TEST_CASE("binary ops name the op and both shapes on mismatch", "[elementwise][errors]") {
  REQUIRE_THROWS_AS(add(zeros({2, 3}), zeros({4})), ShapeError);
  REQUIRE_THROWS_WITH(add(zeros({2, 3}), zeros({4})),
                      "add: shapes [2, 3] and [4] cannot be broadcast together (dim -1: 3 vs 4)");
  REQUIRE_THROWS_WITH(mul(zeros({2, 3}), zeros({3, 3})), Contains("mul: shapes [2, 3] and [3, 3]"));
  REQUIRE_THROWS_AS(add(zeros({2}), zeros({2}, DType::float64)), DTypeError);
  REQUIRE_THROWS_WITH(sub(zeros({2}), zeros({2}, DType::float64)),
                      Contains("sub: dtypes differ (float32 [2] and float64 [2])"));
  REQUIRE_THROWS_WITH(exp(arange(3, DType::int64)), Contains("exp: dtype int64 is not supported"));
}

TEST_CASE("unary ops match the C library", "[elementwise]") {
  const Values xs{-2.5, -1, -0.1, 0.3, 1, 2.7};
  Tensor x = tensor(xs, {6}, DType::float64);
  auto check = [&](const Tensor& y, auto f) {
    const Values v = y.to_vector();
    for (std::size_t i = 0; i < xs.size(); ++i) CHECK(v[i] == Approx(f(xs[i])).epsilon(1e-14));
  };
  check(exp(x), [](double v) { return std::exp(v); });
  check(abs(x), [](double v) { return std::abs(v); });
  check(tanh(x), [](double v) { return std::tanh(v); });
  check(sigmoid(x), [](double v) { return 1 / (1 + std::exp(-v)); });
  check(relu(x), [](double v) { return v > 0 ? v : 0.0; });
  check(silu(x), [](double v) { return v / (1 + std::exp(-v)); });
  check(erf(x), [](double v) { return std::erf(v); });
  check(gelu(x), [](double v) { return 0.5 * v * (1 + std::erf(v / std::sqrt(2.0))); });
  check(gelu(x, "tanh"), [](double v) {
    return 0.5 * v * (1 + std::tanh(std::sqrt(2 / M_PI) * (v + 0.044715 * v * v * v)));
  });
  check(clamp(x, -1.0, 1.0), [](double v) { return std::min(std::max(v, -1.0), 1.0); });
  Tensor p = abs(x);
  CHECK(log(p).to_vector()[0] == Approx(std::log(2.5)));
  CHECK(sqrt(p).to_vector()[5] == Approx(std::sqrt(2.7)));
  CHECK(rsqrt(p).to_vector()[3] == Approx(1 / std::sqrt(0.3)));
  REQUIRE_THROWS_WITH(gelu(x, "fast"), Contains("approximate must be"));
  REQUIRE_THROWS_WITH(clamp(x, 1.0, -1.0), Contains("clamp: min"));
}

TEST_CASE("kinks take PyTorch's subgradient", "[elementwise]") {
  Tensor x = tensor({-1, 0, 2}, {3}, DType::float64).requires_grad_();
  relu(x).sum().backward();
  CHECK(x.grad().to_vector() == Values{0, 0, 1});
  x.reset_grad();
  abs(x).sum().backward();
  CHECK(x.grad().to_vector() == Values{-1, 0, 1});
  x.reset_grad();
  clamp(x, 0.0, 2.0).sum().backward();  // the bounds themselves pass the gradient
  CHECK(x.grad().to_vector() == Values{0, 1, 1});
}

TEST_CASE("reductions over chosen dims", "[reduce]") {
  Tensor x = arange(24, DType::float64).reshape({2, 3, 4});
  CHECK(sum(x).item() == 276);
  CHECK(sum(x, {1}).shape() == Shape{2, 4});
  CHECK(sum(x, {1}).to_vector()[0] == 0 + 4 + 8);
  CHECK(sum(x, {0, 2}, true).shape() == Shape{1, 3, 1});
  CHECK(sum(x, {0, 2}).to_vector() == Values{0 + 1 + 2 + 3 + 12 + 13 + 14 + 15, 92, 124});
  CHECK(sum(x, {-1}).to_vector()[5] == 20 + 21 + 22 + 23);
  CHECK(mean(x, {2}).to_vector()[0] == 1.5);
  CHECK(max(x, 1).to_vector() == Values{8, 9, 10, 11, 20, 21, 22, 23});
  CHECK(max(x).item() == 23);
  CHECK(argmax(tensor({1, 5, 5, 2}, {4}), 0).item() == 1);  // the first maximum
  CHECK(var(tensor({1, 2, 3, 4}, {4}, DType::float64), {0}).item() == Approx(5.0 / 3));
  CHECK(var(tensor({1, 2, 3, 4}, {4}, DType::float64), {0}, 0).item() == Approx(1.25));
  // float32 sums accumulate in double: a float accumulator stops growing at 2^24 (adding 1
  // to 16777216f rounds back to it), so 2^24 + 8 ones would sum to 2^24.
  Tensor big = ones({(1 << 24) + 8});
  CHECK(sum(big).item() == double((1 << 24) + 8));
  REQUIRE_THROWS_WITH(sum(x, {3}), Contains("sum: dim 3 is out of range for a 3-d tensor"));
  REQUIRE_THROWS_WITH(sum(x, {1, -2}), Contains("repeated"));
  REQUIRE_THROWS_WITH(var(ones({1}), {0}), Contains("no degrees of freedom"));
  REQUIRE_THROWS_WITH(max(zeros({0, 2}), 0), Contains("empty"));
}

TEST_CASE("sum over the rows: each column adds its rows in order, on any number of threads", "[reduce]") {
  // A bias's gradient is the sum over the rows of a (rows, features) matrix. The threads split
  // the columns, and a column's sum must not depend on the split: its rows in order, in float.
  const int saved = get_num_threads();
  manual_seed(3);
  for (const Shape& shape : {Shape{300, 250}, Shape{3, 100, 130}, Shape{1, 40000, 5}}) {
    const Tensor x = randn(shape);
    const std::int64_t outer = shape.size() == 3 ? shape[0] : 1, rows = shape[shape.size() - 2],
                       cols = shape.back();
    const std::vector<float> v = x.to_vector<float>();
    std::vector<float> expected(static_cast<std::size_t>(outer * cols), 0.0f);
    for (std::int64_t o = 0; o < outer; ++o)
      for (std::int64_t r = 0; r < rows; ++r)
        for (std::int64_t c = 0; c < cols; ++c) expected[o * cols + c] += v[(o * rows + r) * cols + c];
    for (int threads : {1, 2, 3}) {
      set_num_threads(threads);
      INFO("shape " << shape_str(shape) << ", " << threads << " thread(s)");
      CHECK(sum(x, {x.dim() - 2}).to_vector<float>() == expected);
    }
  }
  set_num_threads(saved);
}

TEST_CASE("max sends the gradient to the first maximum only", "[reduce]") {
  Tensor x = tensor({3, 7, 7, 1}, {2, 2}, DType::float64).requires_grad_();
  max(x, 1).sum().backward();
  CHECK(x.grad().to_vector() == Values{0, 1, 1, 0});
}

TEST_CASE("sum_to_shape reverses broadcasting", "[reduce]") {
  Tensor g = ones({2, 3, 4});
  CHECK(sum_to_shape(g, {3, 1}).to_vector() == Values{8, 8, 8});
  CHECK(sum_to_shape(g, {}).item() == 24);
  CHECK(sum_to_shape(g, {2, 3, 4}).is_same(g));
  REQUIRE_THROWS_AS(sum_to_shape(ones({3}), {2, 3}), ShapeError);
}
