// test_index.cpp — index_select, embedding, masked_fill, where: values by hand, scatter-add
// gradients with repeated indices, float64 gradchecks over edge shapes (negative dims, size-1
// dims, transposed inputs, broadcasting), the parallel embedding backward against a serial
// loop, and error messages.
#include <catch2/catch.hpp>
#include <tapegrad/tapegrad.hpp>

#include "support/gradcheck_catch.hpp"

#include <cmath>
#include <limits>

using namespace tapegrad;
using Catch::Contains;

namespace {

Tensor randn64(const Shape& shape, Generator& gen) {
  return randn(shape, gen, DType::float64).requires_grad_();
}

Tensor ints(const std::vector<double>& values, const Shape& shape) {
  return tensor(values, shape, DType::int64);
}

using Values = std::vector<double>;

}  // namespace

// ---------------------------------------------------------------- index_select

TEST_CASE("index_select picks rows along a dim", "[index][index_select]") {
  const Tensor x = arange(6.0).reshape({2, 3});  // [[0, 1, 2], [3, 4, 5]]
  const Tensor rows = index_select(x, 0, ints({1, 1, 0}, {3}));
  CHECK(rows.shape() == Shape{3, 3});
  CHECK(rows.to_vector() == Values{3, 4, 5, 3, 4, 5, 0, 1, 2});

  const Tensor cols = index_select(x, -1, ints({2, 0}, {2}));
  CHECK(cols.shape() == Shape{2, 2});
  CHECK(cols.to_vector() == Values{2, 0, 5, 3});

  // a transposed input: x.T = [[0, 3], [1, 4], [2, 5]]
  CHECK(index_select(x.transpose(0, 1), 0, ints({2}, {1})).to_vector() == Values{2, 5});
  // int64 data, and no indices at all
  const Tensor xi = ints({10, 20, 30}, {3});
  CHECK(index_select(xi, 0, ints({2, 0}, {2})).to_vector<std::int64_t>() ==
        std::vector<std::int64_t>{30, 10});
  CHECK(index_select(x, 1, Tensor::empty({0}, DType::int64)).shape() == Shape{2, 0});
}

TEST_CASE("index_select backward scatter-adds repeated indices", "[index][index_select][grad]") {
  const Tensor x = tensor({1, 2, 3}, {3}, DType::float64).requires_grad_();
  index_select(x, 0, ints({0, 2, 0, 0}, {4})).backward(tensor({1, 10, 100, 1000}, {4}, DType::float64));
  CHECK(x.grad().to_vector() == Values{1101, 0, 10});
}

TEST_CASE("index_select gradcheck", "[index][index_select][gradcheck]") {
  Generator gen(10);
  SECTION("dim 1 of a transposed input, repeated indices") {
    const Tensor idx = ints({2, 0, 2}, {3});
    CHECK_GRADCHECK([idx](const TensorList& in) { return index_select(in[0].transpose(0, 1), 1, idx); },
                    {randn64({3, 2}, gen)});
  }
  SECTION("negative dim with a size-1 dim in front") {
    const Tensor idx = ints({1, 1, 3, 0}, {4});
    CHECK_GRADCHECK([idx](const TensorList& in) { return index_select(in[0], -1, idx); },
                    {randn64({1, 2, 4}, gen)});
  }
  SECTION("middle dim picked by one index") {
    const Tensor idx = ints({0}, {1});
    CHECK_GRADCHECK([idx](const TensorList& in) { return index_select(in[0], -2, idx) * 3.0; },
                    {randn64({2, 3, 2}, gen)});
  }
}

TEST_CASE("index_select errors", "[index][index_select][errors]") {
  const Tensor x = zeros({3, 2});
  REQUIRE_THROWS_AS(index_select(x, 0, ints({0, 3}, {2})), ValueError);
  REQUIRE_THROWS_WITH(index_select(x, 0, ints({0, 3}, {2})),
                      Contains("index_select: index 3 is out of range for dim 0 of size 3") &&
                          Contains("valid indices: 0..2"));
  REQUIRE_THROWS_WITH(index_select(x, -1, ints({-1}, {1})),
                      Contains("index_select: index -1 is out of range for dim 1 of size 2"));
  REQUIRE_THROWS_AS(index_select(x, 0, tensor({0}, {1})), DTypeError);
  REQUIRE_THROWS_WITH(index_select(x, 0, tensor({0}, {1})), Contains("index_select: indices must be int64"));
  REQUIRE_THROWS_WITH(index_select(x, 0, ints({0, 1}, {1, 2})),
                      Contains("index_select: indices must be 1-d, got shape [1, 2]"));
  REQUIRE_THROWS_WITH(index_select(x, 2, ints({0}, {1})), Contains("index_select: dim 2 is out of range"));
}

// ---------------------------------------------------------------- embedding

TEST_CASE("embedding looks up rows for indices of any shape", "[index][embedding]") {
  const Tensor weight = arange(8.0).reshape({4, 2});  // row v = [2v, 2v + 1]
  const Tensor out = embedding(weight, ints({3, 0, 3, 1, 2, 1}, {2, 3}));
  CHECK(out.shape() == Shape{2, 3, 2});
  CHECK(out.to_vector() == Values{6, 7, 0, 1, 6, 7, 2, 3, 4, 5, 2, 3});
  CHECK(embedding(weight, ints({2}, {})).shape() == Shape{2});  // a 0-d index gives one row
  // a transposed (tied) weight: weight.T is (2, 4), so rows have 4 entries
  CHECK(embedding(weight.transpose(0, 1), ints({1}, {1})).to_vector() == Values{1, 3, 5, 7});
}

TEST_CASE("embedding backward adds the rows of repeated tokens", "[index][embedding][grad]") {
  const Tensor weight = zeros({3, 2}, DType::float64).requires_grad_();
  const Tensor out = embedding(weight, ints({2, 0, 2}, {3}));
  out.backward(tensor({1, 2, 3, 4, 5, 6}, {3, 2}, DType::float64));
  CHECK(weight.grad().to_vector() == Values{3, 4, 0, 0, 6, 8});
}

TEST_CASE("embedding gradcheck", "[index][embedding][gradcheck]") {
  Generator gen(11);
  SECTION("2-d indices with repeats") {
    const Tensor idx = ints({1, 3, 1, 0, 3, 3}, {2, 3});
    CHECK_GRADCHECK([idx](const TensorList& in) { return embedding(in[0], idx); }, {randn64({4, 3}, gen)});
  }
  SECTION("transposed weight, C = 1 and one token") {
    const Tensor idx = ints({2, 2}, {2});
    CHECK_GRADCHECK([idx](const TensorList& in) { return embedding(in[0].transpose(0, 1), idx); },
                    {randn64({1, 3}, gen)});
    const Tensor one = ints({1}, {1, 1});
    CHECK_GRADCHECK([one](const TensorList& in) { return embedding(in[0], one); }, {randn64({2, 5}, gen)});
  }
}

TEST_CASE("embedding backward in parallel equals a serial scatter-add", "[index][embedding][grad]") {
  // Big enough (N * C > kParallelGrain) for the threaded path; few rows, so many repeats.
  const std::int64_t V = 37, C = 100, N = 2000;
  Generator gen(12);
  const Tensor weight = randn({V, C}, gen).requires_grad_();
  const Tensor idx = randint(0, V, {N}, gen);
  const Tensor dout = randn({N, C}, gen);
  embedding(weight, idx).backward(dout);

  const std::vector<std::int64_t> ids = idx.to_vector<std::int64_t>();
  const std::vector<float> g = dout.to_vector<float>();
  std::vector<float> expected(V * C, 0.0f);
  for (std::int64_t n = 0; n < N; ++n)
    for (std::int64_t c = 0; c < C; ++c) expected[ids[n] * C + c] += g[n * C + c];
  // The same additions in the same order (k ascending per column): bit-identical.
  CHECK(weight.grad().to_vector<float>() == expected);
}

TEST_CASE("embedding errors", "[index][embedding][errors]") {
  const Tensor weight = zeros({5, 2});
  REQUIRE_THROWS_AS(embedding(weight, ints({0, 5}, {2})), ValueError);
  REQUIRE_THROWS_WITH(embedding(weight, ints({4, 0, 5}, {3})),
                      Contains("embedding: index 5 is out of range for dim 0 of size 5") &&
                          Contains("[5, 2]") && Contains("valid indices: 0..4"));
  REQUIRE_THROWS_WITH(embedding(weight, ints({-2}, {1})), Contains("embedding: index -2 is out of range"));
  REQUIRE_THROWS_WITH(embedding(zeros({0, 2}), ints({0}, {1})), Contains("valid indices: none"));
  REQUIRE_THROWS_AS(embedding(zeros({5}), ints({0}, {1})), ShapeError);
  REQUIRE_THROWS_WITH(embedding(zeros({5}), ints({0}, {1})),
                      Contains("embedding: weight must be 2-d (V, C), got shape [5]"));
  REQUIRE_THROWS_AS(embedding(weight, tensor({0}, {1})), DTypeError);
  REQUIRE_THROWS_WITH(embedding(weight, tensor({0}, {1})),
                      Contains("embedding: indices must be int64, got float32"));
}

// ---------------------------------------------------------------- masked_fill

TEST_CASE("masked_fill replaces masked positions", "[index][masked_fill]") {
  const Tensor x = arange(6.0).reshape({2, 3});
  const Tensor row_mask = ints({1, 0, 1}, {3});  // broadcast over rows
  CHECK(masked_fill(x, row_mask, -1).to_vector() == Values{-1, 1, -1, -1, 4, -1});
  const Tensor col_mask = tensor({0, 0.5}, {2, 1});  // any dtype, nonzero is true
  CHECK(masked_fill(x, col_mask, 9).to_vector() == Values{0, 1, 2, 9, 9, 9});
  CHECK(masked_fill(x, scalar_tensor(1.0, DType::int64), 7).to_vector() == Values{7, 7, 7, 7, 7, 7});
  CHECK(x.to_vector() == Values{0, 1, 2, 3, 4, 5});  // x is untouched

  // -inf, as for attention masks, into a transposed input
  const Tensor filled = masked_fill(x.transpose(0, 1), ints({0, 1}, {1, 2}), -INFINITY);
  CHECK(filled.shape() == Shape{3, 2});
  const Values v = filled.to_vector();
  CHECK(v[0] == 0);
  CHECK(v[2] == 1);
  CHECK(v[4] == 2);
  CHECK(std::isinf(v[1]));
  CHECK(v[5] < 0);
  // int64 data
  CHECK(masked_fill(ints({1, 2}, {2}), ints({0, 1}, {2}), 5).to_vector<std::int64_t>() ==
        std::vector<std::int64_t>{1, 5});
}

TEST_CASE("masked_fill backward zeroes masked positions", "[index][masked_fill][grad]") {
  const Tensor x = zeros({2, 2}, DType::float64).requires_grad_();
  masked_fill(x, ints({1, 0}, {2}), 3).backward(tensor({1, 2, 3, 4}, {2, 2}, DType::float64));
  CHECK(x.grad().to_vector() == Values{0, 2, 0, 4});
}

TEST_CASE("masked_fill gradcheck", "[index][masked_fill][gradcheck]") {
  Generator gen(13);
  const Tensor row_mask = ints({0, 1, 1}, {1, 3});
  const Tensor col_mask = tensor({1, 0}, {2, 1}, DType::float64);
  const Tensor full_mask = ints({1, 0, 0, 1, 0, 1}, {2, 3});
  CHECK_GRADCHECK([row_mask](const TensorList& in) { return masked_fill(in[0], row_mask, 2.5); },
                  {randn64({2, 3}, gen)});
  CHECK_GRADCHECK(
      [col_mask](const TensorList& in) { return masked_fill(in[0].transpose(0, 1), col_mask, 0); },
                  {randn64({3, 2}, gen)});
  CHECK_GRADCHECK([full_mask](const TensorList& in) { return masked_fill(in[0], full_mask, -4); },
                  {randn64({2, 3}, gen)});
}

TEST_CASE("masked_fill errors", "[index][masked_fill][errors]") {
  const Tensor x = zeros({2, 3});
  REQUIRE_THROWS_AS(masked_fill(x, ints({1, 0}, {2}), 0), ShapeError);
  REQUIRE_THROWS_WITH(masked_fill(x, ints({1, 0}, {2}), 0),
                      Contains("masked_fill: mask of shape [2] cannot be broadcast to the shape of x "
                               "[2, 3]"));
  // a mask that would make the output bigger
  REQUIRE_THROWS_WITH(masked_fill(x, zeros({4, 2, 3}), 0), Contains("mask of shape [4, 2, 3]"));
  REQUIRE_THROWS_AS(masked_fill(ints({1}, {1}), ints({1}, {1}), INFINITY), ValueError);
}

// ---------------------------------------------------------------- where

TEST_CASE("where picks from a or b with broadcasting", "[index][where]") {
  const Tensor cond = ints({1, 0}, {2, 1});
  const Tensor a = arange(6.0).reshape({2, 3});
  const Tensor b = tensor({-1, -2, -3}, {3});
  const Tensor out = where(cond, a, b);
  CHECK(out.shape() == Shape{2, 3});
  CHECK(out.to_vector() == Values{0, 1, 2, -1, -2, -3});
  // the condition alone sets the shape; float condition, 0-d b
  const Tensor c2 = tensor({0, 2, 0}, {3});
  const Tensor out2 = where(c2, tensor({5}, {1}), scalar_tensor(0.0));
  CHECK(out2.shape() == Shape{3});
  CHECK(out2.to_vector() == Values{0, 5, 0});
  // a transposed input
  CHECK(where(ints({1, 0}, {2}), a.transpose(0, 1), 0.0 * ones({3, 2})).to_vector() ==
        Values{0, 0, 1, 0, 2, 0});
}

TEST_CASE("where backward routes dout to a or b", "[index][where][grad]") {
  const Tensor a = zeros({2, 2}, DType::float64).requires_grad_();
  const Tensor b = zeros({2}, DType::float64).requires_grad_();  // broadcast over rows
  where(ints({1, 0, 0, 1}, {2, 2}), a, b).backward(tensor({1, 2, 3, 4}, {2, 2}, DType::float64));
  CHECK(a.grad().to_vector() == Values{1, 0, 0, 4});
  CHECK(b.grad().to_vector() == Values{3, 2});
}

TEST_CASE("where gradcheck", "[index][where][gradcheck]") {
  Generator gen(14);
  const Tensor cond = ints({1, 0, 1, 0, 0, 1}, {2, 3});
  const Tensor col_cond = tensor({0, 1}, {2, 1}, DType::float64);
  SECTION("b broadcast to a") {
    CHECK_GRADCHECK([cond](const TensorList& in) { return where(cond, in[0], in[1]); },
                    {randn64({2, 3}, gen), randn64({1, 3}, gen)});
  }
  SECTION("a broadcast to b, a transposed b") {
    CHECK_GRADCHECK([cond](const TensorList& in) { return where(cond, in[0], in[1].transpose(0, 1)); },
                    {randn64({3}, gen), randn64({3, 2}, gen)});
  }
  SECTION("the condition broadcast, 0-d a, size-1 b") {
    CHECK_GRADCHECK([col_cond](const TensorList& in) { return where(col_cond, in[0], in[1]); },
                    {randn64({}, gen), randn64({1, 3}, gen)});
  }
}

TEST_CASE("where errors", "[index][where][errors]") {
  REQUIRE_THROWS_AS(where(ints({1}, {1}), zeros({2}), zeros({2}, DType::float64)), DTypeError);
  REQUIRE_THROWS_WITH(where(ints({1}, {1}), zeros({2}), zeros({2}, DType::float64)),
                      Contains("where: a is float32 [2] but b is float64 [2]"));
  REQUIRE_THROWS_AS(where(ints({1}, {1}), zeros({2}), zeros({3})), ShapeError);
  REQUIRE_THROWS_WITH(where(ints({1, 0, 1}, {3}), zeros({2, 2}), zeros({2})),
                      Contains("where: shapes [3] and [2, 2] cannot be broadcast"));
}
