// test_matmul.cpp — matmul and linear: the BLAS path against the textbook triple loop
// (matmul_naive), batch broadcasting, 1-d operands as torch.matmul, transposed views read
// through gemm's transpose flags, float64 gradchecks of all of these, and error messages.
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "support/gradcheck_catch.hpp"

using namespace tapegrad;
using tapegrad::testing::param;
using Catch::Contains;

namespace {

Tensor random(const Shape& shape, DType dtype, std::uint64_t seed) {
  Generator gen(seed);
  return randn(shape, gen, dtype);
}

// float32 sums of up to ~40 products of normals: a few ulps of the largest partial sum.
double tolerance(DType dtype) { return dtype == DType::float32 ? 1e-4 : 1e-12; }

// Same shape and dtype, and every element within tol.
void check_close(const Tensor& actual, const Tensor& expected, double tol) {
  REQUIRE(actual.shape() == expected.shape());
  REQUIRE(actual.dtype() == expected.dtype());
  const std::vector<double> a = actual.to_vector(), e = expected.to_vector();
  double worst = 0;
  for (std::size_t i = 0; i < a.size(); ++i) worst = std::max(worst, std::abs(a[i] - e[i]));
  INFO("shape " << shape_str(actual.shape()) << ", max |actual - expected| = " << worst);
  CHECK(worst <= tol);
}

// The batched product written out: each output matrix is matmul_naive of the two operand
// matrices its batch index maps to (a size-1 batch dim reads its only matrix). Needs K > 0.
Tensor batched_naive(const Tensor& a, const Tensor& b) {
  const std::int64_t M = a.size(-2), K = a.size(-1), N = b.size(-1);
  const Shape a_batch(a.shape().begin(), a.shape().end() - 2);
  const Shape b_batch(b.shape().begin(), b.shape().end() - 2);
  const std::size_t nd = std::max(a_batch.size(), b_batch.size());
  // Right-aligned batch shapes, padded with 1 on the left.
  Shape pa(nd, 1), pb(nd, 1), out_batch(nd);
  std::copy(a_batch.begin(), a_batch.end(), pa.end() - a_batch.size());
  std::copy(b_batch.begin(), b_batch.end(), pb.end() - b_batch.size());
  for (std::size_t d = 0; d < nd; ++d) out_batch[d] = std::max(pa[d], pb[d]);

  const Tensor a3 = a.reshape({-1, M, K}), b3 = b.reshape({-1, K, N});
  std::vector<double> values;
  for (std::int64_t i = 0; i < shape_numel(out_batch); ++i) {
    std::int64_t rest = i, ia = 0, ib = 0, sa = 1, sb = 1;
    for (std::size_t d = nd; d-- > 0;) {  // unravel i, last batch dim fastest
      const std::int64_t index = rest % out_batch[d];
      rest /= out_batch[d];
      ia += (pa[d] == 1 ? 0 : index) * sa;
      ib += (pb[d] == 1 ? 0 : index) * sb;
      sa *= pa[d];
      sb *= pb[d];
    }
    const Tensor c = matmul_naive(narrow(a3, 0, ia, 1).reshape({M, K}), narrow(b3, 0, ib, 1).reshape({K, N}));
    const std::vector<double> v = c.to_vector();
    values.insert(values.end(), v.begin(), v.end());
  }
  Shape out_shape = out_batch;
  out_shape.push_back(M);
  out_shape.push_back(N);
  return tensor(values, out_shape, a.dtype());
}

// x (..., in) · weightᵀ (in, out) + bias, from matmul_naive on the rows of x.
Tensor linear_naive(const Tensor& x, const Tensor& weight, const Tensor& bias) {
  const std::int64_t in = weight.size(1), out = weight.size(0);
  Tensor y = matmul_naive(x.reshape({-1, in}), weight.transpose(0, 1).contiguous());
  std::vector<double> v = y.to_vector();
  if (bias.defined()) {
    const std::vector<double> vb = bias.to_vector();
    for (std::size_t i = 0; i < v.size(); ++i) v[i] += vb[i % out];
  }
  Shape out_shape = x.shape();
  out_shape.back() = out;
  return tensor(v, out_shape, x.dtype());
}

const DType kFloatTypes[] = {DType::float32, DType::float64};

}  // namespace

// ------------------------------------------------------------------------ forward values

TEST_CASE("matmul 2-d equals matmul_naive", "[matmul]") {
  struct Case { std::int64_t M, K, N; };
  const Case cases[] = {{1, 1, 1}, {7, 3, 5}, {1, 4, 1}, {5, 1, 6}, {2, 5, 3}, {16, 33, 9}, {3, 8, 1}};
  for (DType dtype : kFloatTypes)
    for (const Case& c : cases) {
      INFO(dtype_name(dtype) << " M=" << c.M << " K=" << c.K << " N=" << c.N);
      const Tensor a = random({c.M, c.K}, dtype, 1), b = random({c.K, c.N}, dtype, 2);
      const Tensor out = matmul(a, b);
      check_close(out, matmul_naive(a, b), tolerance(dtype));
    }
}

TEST_CASE("matmul closed-form 2x2", "[matmul]") {
  const Tensor a = tensor({1, 2, 3, 4}, {2, 2}), b = tensor({5, 6, 7, 8}, {2, 2});
  CHECK(matmul(a, b).to_vector() == std::vector<double>{19, 22, 43, 50});
}

TEST_CASE("matmul with an empty inner or outer dim", "[matmul]") {
  for (DType dtype : kFloatTypes) {
    INFO(dtype_name(dtype));
    // K = 0: a sum of no products, all zeros (the output buffer must be zero-filled).
    const Tensor out = matmul(random({3, 0}, dtype, 1), random({0, 4}, dtype, 2));
    check_close(out, zeros({3, 4}, dtype), 0.0);
    CHECK(matmul(random({0, 3}, dtype, 1), random({3, 4}, dtype, 2)).shape() == Shape{0, 4});
    CHECK(matmul(random({2, 3}, dtype, 1), random({3, 0}, dtype, 2)).shape() == Shape{2, 0});
    check_close(matmul(random({3, 2, 0}, dtype, 1).transpose(0, 1), random({2, 0, 4}, dtype, 2)),
                zeros({2, 3, 4}, dtype), 0.0);
  }
}

TEST_CASE("matmul backward with an empty dim gives empty or zero gradients", "[matmul]") {
  // K = 0: dA is (3, 0), dB is (0, 4).
  Tensor a = param({3, 0}, 1), b = param({0, 4}, 2);
  matmul(a, b).backward(ones({3, 4}, DType::float64));
  CHECK(a.grad().shape() == Shape{3, 0});
  CHECK(b.grad().shape() == Shape{0, 4});
  // M = 0: dB = Aᵀ (3, 0) · dC (0, 4) is a zero (3, 4) matrix.
  Tensor a2 = param({0, 3}, 3), b2 = param({3, 4}, 4);
  matmul(a2, b2).backward(zeros({0, 4}, DType::float64));
  CHECK(a2.grad().shape() == Shape{0, 3});
  check_close(b2.grad(), zeros({3, 4}, DType::float64), 0.0);
}

TEST_CASE("matmul batched with broadcast batch dims equals the naive batched product", "[matmul]") {
  struct Case { Shape a, b, out; };
  const Case cases[] = {
      {{2, 1, 3, 4}, {5, 4, 2}, {2, 5, 3, 2}},  // size-1 batch dim against a missing one
      {{3, 4}, {2, 4, 5}, {2, 3, 5}},           // 2-d on the left of a batch
      {{2, 3, 4}, {2, 4, 5}, {2, 3, 5}},        // same batch
      {{2, 3, 4}, {4, 5}, {2, 3, 5}},           // contiguous batch @ matrix: one gemm over all rows
      {{2, 2, 3, 4}, {2, 1, 4, 3}, {2, 2, 3, 3}},
      {{1, 3, 4}, {3, 4, 2}, {3, 3, 2}},
  };
  for (DType dtype : kFloatTypes)
    for (const Case& c : cases) {
      INFO(dtype_name(dtype) << " " << shape_str(c.a) << " @ " << shape_str(c.b));
      const Tensor a = random(c.a, dtype, 3), b = random(c.b, dtype, 4);
      const Tensor out = matmul(a, b);
      CHECK(out.shape() == c.out);
      check_close(out, batched_naive(a, b), tolerance(dtype));
    }
}

TEST_CASE("matmul with 1-d operands follows torch.matmul", "[matmul]") {
  for (DType dtype : kFloatTypes) {
    INFO(dtype_name(dtype));
    const Tensor v = random({4}, dtype, 5), m = random({4, 3}, dtype, 6), mt = random({3, 4}, dtype, 7);
    // vector @ matrix: a row vector, the row dim removed
    check_close(matmul(v, m), matmul_naive(v.reshape({1, 4}), m).reshape({3}), tolerance(dtype));
    // matrix @ vector: a column vector, the column dim removed
    check_close(matmul(mt, v), matmul_naive(mt, v.reshape({4, 1})).reshape({3}), tolerance(dtype));
    // batch @ vector and vector @ batch
    const Tensor batch = random({2, 3, 4}, dtype, 8);
    check_close(matmul(batch, v), batched_naive(batch, v.reshape({4, 1})).reshape({2, 3}), tolerance(dtype));
    const Tensor batch_b = random({2, 4, 3}, dtype, 9);
    check_close(matmul(v, batch_b), batched_naive(v.reshape({1, 4}), batch_b).reshape({2, 3}), tolerance(dtype));
    // a strided vector (every other element) is read in place or copied, same values
    const Tensor strided = slice(random({8}, dtype, 10), 0, 0, 8, 2);
    check_close(matmul(strided, m), matmul(strided.contiguous(), m), tolerance(dtype));
  }
}

// torch.matmul(v, w) of two vectors is their dot product, a 0-d tensor (squeezing one dim
// after the other would leave shape [1], or squeeze a dim that no longer exists).
TEST_CASE("matmul of two vectors is their dot product (0-d)", "[matmul]") {
  for (DType dtype : kFloatTypes) {
    INFO(dtype_name(dtype));
    const Tensor v = tensor({1, 2, 3}, {3}, dtype), w = tensor({4, 5, 6}, {3}, dtype);
    Tensor out;
    REQUIRE_NOTHROW(out = matmul(v, w));
    CHECK(out.shape() == Shape{});
    CHECK(out.item() == 32);
  }
}

TEST_CASE("matmul of transposed views equals the contiguous result", "[matmul]") {
  for (DType dtype : kFloatTypes) {
    INFO(dtype_name(dtype));
    const double tol = tolerance(dtype);
    // 2-d: Aᵀ stored as (K, M), Bᵀ stored as (N, K)
    const Tensor at = random({5, 7}, dtype, 11).transpose(-1, -2);  // (7, 5)
    const Tensor bt = random({3, 5}, dtype, 12).transpose(-1, -2);  // (5, 3)
    REQUIRE_FALSE(at.is_contiguous());
    check_close(matmul(at, random({5, 3}, dtype, 13)), matmul_naive(at.contiguous(), random({5, 3}, dtype, 13)), tol);
    check_close(matmul(at, bt), matmul(at.contiguous(), bt.contiguous()), tol);
    check_close(matmul(random({7, 5}, dtype, 14), bt), matmul_naive(random({7, 5}, dtype, 14), bt.contiguous()), tol);
    // batched, attention-shaped: q (B, H, T, D) @ kᵀ (B, H, D, T)
    const Tensor q = random({2, 3, 4, 5}, dtype, 15), k = random({2, 3, 4, 5}, dtype, 16);
    const Tensor kt = k.transpose(-1, -2);
    check_close(matmul(q, kt), matmul(q, kt.contiguous()), tol);
    check_close(matmul(q, kt), batched_naive(q, kt.contiguous()), tol);
    // a transposed batch on the left of a 2-d matrix (not the one-gemm fast path)
    const Tensor xt = random({2, 5, 3}, dtype, 17).transpose(-1, -2);  // (2, 3, 5)
    const Tensor w = random({5, 4}, dtype, 18);
    check_close(matmul(xt, w), matmul(xt.contiguous(), w), tol);
    // single-row and single-column transposed views (stride-1 edge cases of the layout test)
    const Tensor row_t = random({4, 1}, dtype, 19).transpose(0, 1);  // (1, 4), strides (1, 1)
    check_close(matmul(row_t, random({4, 3}, dtype, 20)),
                matmul_naive(row_t.contiguous(), random({4, 3}, dtype, 20)), tol);
    const Tensor col_t = random({1, 4}, dtype, 21).transpose(0, 1);  // (4, 1)
    check_close(matmul(random({2, 4}, dtype, 22), col_t),
                matmul_naive(random({2, 4}, dtype, 22), col_t.contiguous()), tol);
    // a view gemm cannot read in place (stride 2 inside a row) is copied first
    const Tensor every_other = slice(random({3, 8}, dtype, 23), 1, 0, 8, 2);  // (3, 4), strides (8, 2)
    check_close(matmul(every_other, random({4, 2}, dtype, 24)),
                matmul_naive(every_other.contiguous(), random({4, 2}, dtype, 24)), tol);
    // a permuted batch whose matrices are row-major but interleaved in memory
    const Tensor interleaved = random({3, 2, 4}, dtype, 25).permute({1, 0, 2});  // (2, 3, 4)
    check_close(matmul(interleaved, random({2, 4, 3}, dtype, 26)),
                batched_naive(interleaved.contiguous(), random({2, 4, 3}, dtype, 26)), tol);
  }
}

// torch gives zeros (2, 3, 4). The one-gemm fast path folds the batch into rows: with K = 0
// the row count cannot be inferred from a reshape to {-1, K}, it must be counted.
TEST_CASE("matmul of a contiguous batch with K = 0 gives zeros", "[matmul]") {
  Tensor out;
  REQUIRE_NOTHROW(out = matmul(zeros({2, 3, 0}), zeros({0, 4})));
  CHECK(out.shape() == Shape{2, 3, 4});
  check_close(out, zeros({2, 3, 4}), 0.0);
}

// ------------------------------------------------------------------------ backward

TEST_CASE("matmul gradcheck 2-d", "[matmul][gradcheck]") {
  const auto f = [](const TensorList& in) { return matmul(in[0], in[1]); };
  CHECK_GRADCHECK(f, {param({1, 1}, 1), param({1, 1}, 2)});
  CHECK_GRADCHECK(f, {param({4, 3}, 3), param({3, 5}, 4)});
  CHECK_GRADCHECK(f, {param({1, 4}, 5), param({4, 1}, 6)});
  CHECK_GRADCHECK(f, {param({5, 1}, 7), param({1, 4}, 8)});
  // only one input requires grad: the other one's save is skipped
  CHECK_GRADCHECK(f, {param({3, 2}, 9), param({2, 4}, 10).detach()});
  CHECK_GRADCHECK(f, {param({3, 2}, 11).detach(), param({2, 4}, 12)});
}

TEST_CASE("matmul gradcheck batched with broadcast batch dims", "[matmul][gradcheck]") {
  const auto f = [](const TensorList& in) { return matmul(in[0], in[1]); };
  // (2, 1, 3, 2) @ (2, 2, 2) -> (2, 2, 3, 2): dA sums over the broadcast dim, dB over the leading one
  CHECK_GRADCHECK(f, {param({2, 1, 3, 2}, 1), param({2, 2, 2}, 2)});
  // 2-d @ batch: dA sums over the batch
  CHECK_GRADCHECK(f, {param({3, 4}, 3), param({2, 4, 2}, 4)});
  // batch @ 2-d, contiguous (one gemm over all rows): dB sums over all rows
  CHECK_GRADCHECK(f, {param({2, 3, 4}, 5), param({4, 2}, 6)});
  // size-1 batch dims on both sides
  CHECK_GRADCHECK(f, {param({2, 1, 2, 3}, 7), param({1, 2, 3, 2}, 8)});
  CHECK_GRADCHECK(f, {param({2, 3, 2}, 9), param({1, 2, 2}, 10)});
}

TEST_CASE("matmul gradcheck with transposed inputs", "[matmul][gradcheck]") {
  using L = const TensorList&;
  // Aᵀ and Bᵀ views go to gemm through its transpose flags, forward and backward.
  CHECK_GRADCHECK([](L in) { return matmul(in[0].transpose(-1, -2), in[1]); }, {param({3, 4}, 1), param({3, 2}, 2)});
  CHECK_GRADCHECK([](L in) { return matmul(in[0], in[1].transpose(-1, -2)); }, {param({4, 3}, 3), param({2, 3}, 4)});
  CHECK_GRADCHECK([](L in) { return matmul(in[0].transpose(-1, -2), in[1].transpose(-1, -2)); },
                  {param({3, 4}, 5), param({2, 3}, 6)});
  // q @ kᵀ with a broadcast head dim
  CHECK_GRADCHECK([](L in) { return matmul(in[0], in[1].transpose(-1, -2)); },
                  {param({2, 1, 3, 2}, 7), param({2, 2, 3, 2}, 8)});
  // a transposed batch @ 2-d: not the fast path
  CHECK_GRADCHECK([](L in) { return matmul(in[0].transpose(-1, -2), in[1]); },
                  {param({2, 3, 4}, 9), param({3, 2}, 10)});
  // a copied (unreadable) view: every other column
  CHECK_GRADCHECK([](L in) { return matmul(slice(in[0], 1, 0, 6, 2), in[1]); }, {param({2, 6}, 11), param({3, 2}, 12)});
}

TEST_CASE("matmul gradcheck with 1-d operands", "[matmul][gradcheck]") {
  const auto f = [](const TensorList& in) { return matmul(in[0], in[1]); };
  CHECK_GRADCHECK(f, {param({4}, 1), param({4, 3}, 2)});
  CHECK_GRADCHECK(f, {param({3, 4}, 3), param({4}, 4)});
  CHECK_GRADCHECK(f, {param({2, 3, 4}, 5), param({4}, 6)});
  CHECK_GRADCHECK(f, {param({4}, 7), param({2, 4, 3}, 8)});
}

TEST_CASE("matmul gradcheck of two vectors", "[matmul][gradcheck]") {
  const auto f = [](const TensorList& in) { return matmul(in[0], in[1]); };
  CHECK_GRADCHECK(f, {param({4}, 1), param({4}, 2)});
}

TEST_CASE("matmul float32 backward agrees with float64", "[matmul]") {
  // The gradcheck runs in float64; this covers the float32 gemm calls of the backward.
  const Tensor a64 = random({2, 4, 3}, DType::float64, 1), b64 = random({5, 4}, DType::float64, 2);
  Tensor a32 = a64.to(DType::float32).requires_grad_(), b32 = b64.to(DType::float32).requires_grad_();
  Tensor a = a64.detach().requires_grad_(), b = b64.detach().requires_grad_();
  const Tensor dout64 = random({2, 3, 5}, DType::float64, 3);
  // Aᵀ (2, 3, 4) @ Bᵀ (4, 5)
  matmul(a.transpose(-1, -2), b.transpose(0, 1)).backward(dout64);
  matmul(a32.transpose(-1, -2), b32.transpose(0, 1)).backward(dout64.to(DType::float32));
  check_close(a32.grad(), a.grad().to(DType::float32), 1e-4);
  check_close(b32.grad(), b.grad().to(DType::float32), 1e-4);
}

// ------------------------------------------------------------------------ linear

TEST_CASE("linear equals x · weightᵀ + bias", "[linear]") {
  for (DType dtype : kFloatTypes) {
    INFO(dtype_name(dtype));
    const double tol = tolerance(dtype);
    const Tensor weight = random({3, 4}, dtype, 1), bias = random({3}, dtype, 2);
    const Tensor x2 = random({5, 4}, dtype, 3), x3 = random({2, 5, 4}, dtype, 4), x1 = random({4}, dtype, 5);
    check_close(linear(x2, weight, bias), linear_naive(x2, weight, bias), tol);
    check_close(linear(x2, weight), linear_naive(x2, weight, Tensor()), tol);
    check_close(linear(x3, weight, bias), linear_naive(x3, weight, bias), tol);
    check_close(linear(x1, weight, bias), linear_naive(x1, weight, bias), tol);
    CHECK(linear(x3, weight, bias).shape() == Shape{2, 5, 3});
    CHECK(linear(x1, weight).shape() == Shape{3});
    // non-contiguous input and weight (a tied weight stored (in, out))
    const Tensor xt = random({4, 5}, dtype, 6).transpose(0, 1), wt = random({4, 3}, dtype, 7).transpose(0, 1);
    check_close(linear(xt, wt, bias), linear_naive(xt.contiguous(), wt.contiguous(), bias), tol);
    // zero rows
    CHECK(linear(random({0, 4}, dtype, 8), weight, bias).shape() == Shape{0, 3});
  }
}

// torch gives bias broadcast to (3, 2). The row count must come from the leading dims of x:
// numel / in_features would be 0 rows here, no bias in the forward and a failing backward.
TEST_CASE("linear with in_features = 0 gives the bias in every row", "[linear]") {
  Tensor x = param({3, 0}, 1), weight = param({2, 0}, 2), bias = param({2}, 3);
  const Tensor y = linear(x, weight, bias);
  REQUIRE(y.shape() == Shape{3, 2});
  const std::vector<double> vb = bias.to_vector();
  check_close(y, tensor({vb[0], vb[1], vb[0], vb[1], vb[0], vb[1]}, {3, 2}, DType::float64), 0.0);
  REQUIRE_NOTHROW(y.backward(ones({3, 2}, DType::float64)));
  check_close(bias.grad(), full({2}, 3.0, DType::float64), 0.0);
}

TEST_CASE("linear gradcheck", "[linear][gradcheck]") {
  using L = const TensorList&;
  const auto with_bias = [](L in) { return linear(in[0], in[1], in[2]); };
  const auto without_bias = [](L in) { return linear(in[0], in[1]); };
  CHECK_GRADCHECK(with_bias, {param({3, 4}, 1), param({2, 4}, 2), param({2}, 3)});
  CHECK_GRADCHECK(without_bias, {param({3, 4}, 4), param({2, 4}, 5)});
  // 3-d input: leading dims fold into rows; dweight and dbias sum over all of them
  CHECK_GRADCHECK(with_bias, {param({2, 3, 4}, 6), param({2, 4}, 7), param({2}, 8)});
  CHECK_GRADCHECK(without_bias, {param({2, 2, 3}, 9), param({4, 3}, 10)});
  // 1-d input
  CHECK_GRADCHECK(with_bias, {param({4}, 11), param({3, 4}, 12), param({3}, 13)});
  // only some inputs require grad
  CHECK_GRADCHECK(with_bias, {param({3, 4}, 14), param({2, 4}, 15).detach(), param({2}, 16).detach()});
  CHECK_GRADCHECK(with_bias, {param({3, 4}, 17).detach(), param({2, 4}, 18), param({2}, 19)});
  // non-contiguous input and weight
  CHECK_GRADCHECK([](L in) { return linear(in[0].transpose(0, 1), in[1].transpose(0, 1), in[2]); },
                  {param({4, 3}, 20), param({4, 2}, 21), param({2}, 22)});
}

// ------------------------------------------------------------------------ errors

TEST_CASE("matmul errors name the op and both shapes", "[matmul][errors]") {
  REQUIRE_THROWS_AS(matmul(zeros({2, 3}), zeros({4, 5})), ShapeError);
  REQUIRE_THROWS_WITH(matmul(zeros({2, 3}), zeros({4, 5})),
                      Contains("matmul") && Contains("[2, 3]") && Contains("[4, 5]") &&
                          Contains("3 columns vs 4 rows"));
  // batched and 1-d shapes are named whole
  REQUIRE_THROWS_WITH(matmul(zeros({2, 3, 4}), zeros({2, 5, 6})),
                      Contains("matmul") && Contains("[2, 3, 4]") && Contains("[2, 5, 6]"));
  REQUIRE_THROWS_WITH(matmul(zeros({3}), zeros({4})), Contains("matmul") && Contains("[3]") && Contains("[4]"));
  REQUIRE_THROWS_WITH(matmul(zeros({2, 3}), zeros({4})),
                      Contains("matmul") && Contains("[2, 3]") && Contains("[4]"));
  // batch dims that do not broadcast
  REQUIRE_THROWS_AS(matmul(zeros({2, 3, 4}), zeros({3, 4, 5})), ShapeError);
  REQUIRE_THROWS_WITH(matmul(zeros({2, 3, 4}), zeros({3, 4, 5})),
                      Contains("matmul") && Contains("cannot be broadcast"));
  // which dims: the batch dims, with the whole shapes, not only "[8] and [7]"
  REQUIRE_THROWS_WITH(matmul(zeros({8, 3, 4}), zeros({7, 4, 5})),
                      Contains("matmul: shapes [8, 3, 4] and [7, 4, 5] have batch dims [8] and [7] that cannot be broadcast "
                               "(8 vs 7 in batch dim 1 from the right); the last two dims of each input are its matrices"));
  // 0-d operands
  REQUIRE_THROWS_AS(matmul(scalar_tensor(1), zeros({2})), ShapeError);
  REQUIRE_THROWS_WITH(matmul(scalar_tensor(1), zeros({2})), Contains("matmul") && Contains("at least 1 dim"));
}

TEST_CASE("matmul dtype errors", "[matmul][errors]") {
  REQUIRE_THROWS_AS(matmul(zeros({2, 2}), zeros({2, 2}, DType::float64)), DTypeError);
  REQUIRE_THROWS_WITH(matmul(zeros({2, 2}), zeros({2, 2}, DType::float64)),
                      Contains("matmul") && Contains("float32") && Contains("float64"));
  REQUIRE_THROWS_AS(matmul(zeros({2, 2}, DType::int64), zeros({2, 2}, DType::int64)), DTypeError);
  REQUIRE_THROWS_WITH(matmul(zeros({2, 2}, DType::int64), zeros({2, 2}, DType::int64)),
                      Contains("matmul") && Contains("int64"));
  REQUIRE_THROWS_AS(matmul_naive(zeros({2, 2, 2}), zeros({2, 2})), ShapeError);
}

TEST_CASE("linear errors name the shapes", "[linear][errors]") {
  REQUIRE_THROWS_AS(linear(zeros({5, 4}), zeros({4})), ShapeError);
  REQUIRE_THROWS_WITH(linear(zeros({5, 4}), zeros({4})), Contains("linear") && Contains("weight") && Contains("[4]"));
  REQUIRE_THROWS_AS(linear(zeros({5, 4}), zeros({3, 5})), ShapeError);
  REQUIRE_THROWS_WITH(linear(zeros({5, 4}), zeros({3, 5})),
                      Contains("linear") && Contains("[5, 4]") && Contains("[3, 5]"));
  REQUIRE_THROWS_AS(linear(zeros({5, 4}), zeros({3, 4}), zeros({4})), ShapeError);
  REQUIRE_THROWS_WITH(linear(zeros({5, 4}), zeros({3, 4}), zeros({4})),
                      Contains("linear") && Contains("bias") && Contains("[4]") && Contains("[3, 4]"));
  // a (1, out) bias is not accepted: it must be 1-d
  REQUIRE_THROWS_AS(linear(zeros({5, 4}), zeros({3, 4}), zeros({1, 3})), ShapeError);
  REQUIRE_THROWS_WITH(linear(zeros({5, 4}), zeros({3, 4}), zeros({1, 3})), Contains("bias") && Contains("[1, 3]"));
  REQUIRE_THROWS_AS(linear(zeros({5, 4}), zeros({3, 4}, DType::float64)), DTypeError);
  REQUIRE_THROWS_WITH(linear(zeros({5, 4}), zeros({3, 4}, DType::float64)),
                      Contains("linear") && Contains("float32") && Contains("float64"));
}

// A message naming only the input's and the weight's dtypes ("input float64, weight float64")
// would not say what is wrong.
TEST_CASE("linear names a bias of the wrong dtype", "[linear][errors]") {
  REQUIRE_THROWS_AS(linear(zeros({5, 4}, DType::float64), zeros({3, 4}, DType::float64), zeros({3})), DTypeError);
  REQUIRE_THROWS_WITH(linear(zeros({5, 4}, DType::float64), zeros({3, 4}, DType::float64), zeros({3})),
                      Contains("bias") && Contains("float32"));
}
