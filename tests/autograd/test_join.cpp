// test_join.cpp — cat, stack, split, chunk: values by hand, float64 gradchecks over edge
// shapes (negative dims, size-1 dims, transposed inputs), and error messages.
#include <catch2/catch.hpp>
#include <tapegrad/tapegrad.hpp>

#include "support/gradcheck_catch.hpp"

using namespace tapegrad;
using Catch::Contains;

namespace {

Tensor randn64(const Shape& shape, Generator& gen) {
  return randn(shape, gen, DType::float64).requires_grad_();
}

using Values = std::vector<double>;

}  // namespace

TEST_CASE("cat joins along a dim", "[join][cat]") {
  const Tensor a = tensor({1, 2, 3, 4}, {2, 2});
  const Tensor b = tensor({5, 6}, {1, 2});
  const Tensor c = tensor({7, 8, 9, 10, 11, 12}, {2, 3});

  const Tensor rows = cat({a, b}, 0);
  CHECK(rows.shape() == Shape{3, 2});
  CHECK(rows.to_vector() == Values{1, 2, 3, 4, 5, 6});

  const Tensor cols = cat({a, c}, -1);
  CHECK(cols.shape() == Shape{2, 5});
  CHECK(cols.to_vector() == Values{1, 2, 7, 8, 9, 3, 4, 10, 11, 12});

  SECTION("a single tensor is copied, not aliased") {
    const Tensor one = cat({a}, 1);
    CHECK(one.to_vector() == a.to_vector());
    CHECK(one.impl().storage != a.impl().storage);
  }
  SECTION("empty pieces are allowed") {
    const Tensor none = zeros({2, 0});
    const Tensor joined = cat({none, a, none}, 1);
    CHECK(joined.shape() == Shape{2, 2});
    CHECK(joined.to_vector() == a.to_vector());
  }
}

TEST_CASE("cat reads non-contiguous and int64 inputs", "[join][cat]") {
  // arange(6).reshape(2, 3).T = [[0, 3], [1, 4], [2, 5]]
  const Tensor t = arange(6.0, DType::float64).reshape({2, 3}).transpose(0, 1);
  REQUIRE_FALSE(t.is_contiguous());
  const Tensor z = tensor({9, 9}, {1, 2}, DType::float64);
  CHECK(cat({t, z}, 0).to_vector() == Values{0, 3, 1, 4, 2, 5, 9, 9});
  const Tensor w = tensor({7, 8, 9}, {1, 3}, DType::float64);
  CHECK(cat({w.transpose(0, 1), t}, 1).to_vector() == Values{7, 0, 3, 8, 1, 4, 9, 2, 5});

  const Tensor i = tensor({1, 2, 3}, {3}, DType::int64);
  const Tensor j = tensor({-4}, {1}, DType::int64);
  const Tensor ij = cat({i, j}, 0);
  CHECK(ij.dtype() == DType::int64);
  CHECK(ij.to_vector<std::int64_t>() == std::vector<std::int64_t>{1, 2, 3, -4});
}

TEST_CASE("cat backward cuts dout back into pieces", "[join][cat][grad]") {
  const Tensor a = tensor({1, 2, 3, 4}, {2, 2}, DType::float64).requires_grad_();
  const Tensor b = tensor({5, 6}, {2, 1}, DType::float64);  // needs no gradient
  const Tensor c = tensor({7, 8}, {2, 1}, DType::float64).requires_grad_();
  const Tensor out = cat({a, b, c}, 1);  // (2, 4)
  out.backward(tensor({10, 20, 30, 40, 50, 60, 70, 80}, {2, 4}, DType::float64));
  CHECK(a.grad().to_vector() == Values{10, 20, 50, 60});
  CHECK_FALSE(b.grad().defined());
  CHECK(c.grad().to_vector() == Values{40, 80});
}

TEST_CASE("cat gradcheck", "[join][cat][gradcheck]") {
  Generator gen(1);
  SECTION("dim 0, with a size-1 piece") {
    CHECK_GRADCHECK([](const TensorList& in) { return cat({in[0], in[1], in[2]}, 0); },
                    {randn64({2, 3}, gen), randn64({1, 3}, gen), randn64({3, 3}, gen)});
  }
  SECTION("negative dim, a transposed input, an input without grad") {
    const Tensor fixed = randn({3, 2}, gen, DType::float64);
    CHECK_GRADCHECK(
        [](const TensorList& in) { return cat({in[0].transpose(0, 1), in[1], in[2]}, -1); },
        {randn64({2, 3}, gen), randn64({3, 1}, gen), fixed});
  }
  SECTION("middle dim of a 3-d tensor, inputs used twice") {
    CHECK_GRADCHECK([](const TensorList& in) { return cat({in[0], in[1], in[0]}, -2) * 2.0; },
                    {randn64({2, 1, 2}, gen), randn64({2, 2, 2}, gen)});
  }
}

TEST_CASE("cat errors", "[join][cat][errors]") {
  const Tensor a = zeros({2, 3});
  REQUIRE_THROWS_AS(cat({}, 0), ShapeError);
  REQUIRE_THROWS_WITH(cat({}, 0), Contains("cat: expected a non-empty list"));
  REQUIRE_THROWS_AS(cat({a, zeros({3, 3})}, 1), ShapeError);
  REQUIRE_THROWS_WITH(cat({a, zeros({3, 3})}, 1),
                      Contains("cat: tensor 1 has shape [3, 3] but tensor 0 has shape [2, 3]") &&
                          Contains("except dim 1"));
  REQUIRE_THROWS_WITH(cat({a, zeros({2, 3, 1})}, 0), Contains("tensor 1 has shape [2, 3, 1]"));
  REQUIRE_THROWS_AS(cat({a, zeros({2, 3}, DType::float64)}, 0), DTypeError);
  REQUIRE_THROWS_WITH(cat({a, zeros({2, 3}, DType::float64)}, 0),
                      Contains("cat: tensor 0 is float32 but tensor 1 is float64"));
  REQUIRE_THROWS_WITH(cat({a, a}, 2), Contains("cat: dim 2 is out of range"));
  REQUIRE_THROWS_WITH(cat({scalar_tensor(1.0)}, 0), Contains("cat: zero-dimensional"));
}

TEST_CASE("stack adds a new dim", "[join][stack]") {
  const Tensor a = tensor({1, 2, 3}, {3});
  const Tensor b = tensor({4, 5, 6}, {3});
  const Tensor s0 = stack({a, b}, 0);
  CHECK(s0.shape() == Shape{2, 3});
  CHECK(s0.to_vector() == Values{1, 2, 3, 4, 5, 6});
  const Tensor s1 = stack({a, b}, -1);
  CHECK(s1.shape() == Shape{3, 2});
  CHECK(s1.to_vector() == Values{1, 4, 2, 5, 3, 6});
  const Tensor scalars = stack({scalar_tensor(7.0), scalar_tensor(8.0)}, 0);
  CHECK(scalars.shape() == Shape{2});
  CHECK(scalars.to_vector() == Values{7, 8});

  Generator gen(2);
  CHECK_GRADCHECK([](const TensorList& in) { return stack({in[0].transpose(0, 1), in[1]}, 1); },
                  {randn64({3, 2}, gen), randn64({2, 3}, gen)});
  CHECK_GRADCHECK([](const TensorList& in) { return stack({in[0], in[1], in[0]}, -1); },
                  {randn64({1, 3}, gen), randn64({1, 3}, gen)});

  REQUIRE_THROWS_AS(stack({}, 0), ShapeError);
  REQUIRE_THROWS_WITH(stack({a, zeros({4})}, 0),
                      Contains("stack: tensor 1 has shape [4] but tensor 0 has shape [3]"));
  REQUIRE_THROWS_WITH(stack({a, b}, 2), Contains("stack: dim 2 is out of range"));
}

TEST_CASE("split and chunk return views", "[join][split]") {
  const Tensor x = arange(10.0).reshape({5, 2});
  const TensorList pieces = split(x, 2, 0);
  REQUIRE(pieces.size() == 3);
  CHECK(pieces[0].shape() == Shape{2, 2});
  CHECK(pieces[2].shape() == Shape{1, 2});
  CHECK(pieces[1].to_vector() == Values{4, 5, 6, 7});
  CHECK(pieces[2].to_vector() == Values{8, 9});
  CHECK(pieces[1].impl().storage == x.impl().storage);  // a view, no copy

  const TensorList cols = split(x, 1, -1);
  REQUIRE(cols.size() == 2);
  CHECK(cols[1].to_vector() == Values{1, 3, 5, 7, 9});

  CHECK(split(x, 7, 0).size() == 1);  // larger than the dim: the whole tensor
  const TensorList empty_pieces = split(zeros({0, 2}), 3, 0);
  REQUIRE(empty_pieces.size() == 1);
  CHECK(empty_pieces[0].shape() == Shape{0, 2});

  // chunk: ceil(size / chunks) per piece, so sometimes fewer pieces than asked
  const TensorList three = chunk(x, 3, 0);  // 5 rows -> 2, 2, 1
  REQUIRE(three.size() == 3);
  CHECK(three[2].to_vector() == Values{8, 9});
  CHECK(chunk(arange(6.0), 4, 0).size() == 3);  // 6 -> 2, 2, 2
  CHECK(chunk(x, 2, -1)[0].to_vector() == Values{0, 2, 4, 6, 8});
  CHECK(chunk(zeros({0}), 3, 0).size() == 3);

  REQUIRE_THROWS_AS(split(x, 0, 0), ValueError);
  REQUIRE_THROWS_WITH(split(x, -2, 0), Contains("split: split_size must be positive, got -2"));
  REQUIRE_THROWS_WITH(split(x, 1, 2), Contains("split: dim 2 is out of range"));
  REQUIRE_THROWS_WITH(split(scalar_tensor(1.0), 1, 0), Contains("split: a zero-dimensional"));
  REQUIRE_THROWS_AS(chunk(x, 0, 0), ValueError);
  REQUIRE_THROWS_WITH(chunk(x, 0, 0), Contains("chunk: chunks must be positive, got 0"));
}

TEST_CASE("split and chunk gradcheck", "[join][split][gradcheck]") {
  Generator gen(3);
  SECTION("split of a transposed input, pieces reordered and weighted") {
    CHECK_GRADCHECK(
        [](const TensorList& in) {
          const TensorList p = split(in[0].transpose(0, 1), 2, -1);  // (4, 5) -> 2, 2, 1 columns
          return cat({p[2] * 3.0, p[0], p[1] * p[1]}, 1);
        },
        {randn64({5, 4}, gen)});
  }
  SECTION("chunk along a middle dim, one piece unused") {
    CHECK_GRADCHECK(
        [](const TensorList& in) {
          const TensorList p = chunk(in[0], 3, 1);  // (2, 3, 2) -> three (2, 1, 2)
          return p[0] * p[2];
        },
        {randn64({2, 3, 2}, gen)});
  }
}
