// test_layer_norm.cpp — layer_norm and rms_norm: gradcheck with and without affine parameters,
// 3-d inputs and 2-d normalized shapes, the fused kernels against their composition from
// primitive ops (also on the multi-threaded path), rows in groups against rows one by one (bit
// for bit), PyTorch references, error messages.
#include <cmath>
#include <string>

#include "support/gradcheck_catch.hpp"
#include "support/reference.hpp"

using namespace tapegrad;
using tapegrad::testing::ops_reference;
using tapegrad::testing::param;

namespace {

// The trailing dims covered by normalized_shape, as a list of dims to reduce.
std::vector<std::int64_t> trailing_dims(std::size_t k) {
  std::vector<std::int64_t> dims;
  for (std::int64_t d = -static_cast<std::int64_t>(k); d < 0; ++d) dims.push_back(d);
  return dims;
}

Tensor composed_layer_norm(const Tensor& x, const Shape& normalized_shape, const Tensor& weight,
                           const Tensor& bias, double eps) {
  const auto dims = trailing_dims(normalized_shape.size());
  const Tensor centered = sub(x, mean(x, dims, true));
  Tensor y = mul(centered, rsqrt(add(mean(mul(centered, centered), dims, true), eps)));
  if (weight.defined()) y = mul(y, weight);
  if (bias.defined()) y = add(y, bias);
  return y;
}

Tensor composed_rms_norm(const Tensor& x, const Shape& normalized_shape, const Tensor& weight, double eps) {
  const auto dims = trailing_dims(normalized_shape.size());
  Tensor y = mul(x, rsqrt(add(mean(mul(x, x), dims, true), eps)));
  return weight.defined() ? mul(y, weight) : y;
}

// Fresh leaves with the values of `values` (undefined stays undefined).
TensorList leaves(const TensorList& values) {
  TensorList out;
  for (const Tensor& v : values) out.push_back(v.defined() ? v.detach().clone().requires_grad_() : Tensor());
  return out;
}

}  // namespace

TEST_CASE("layer_norm and rms_norm pass gradcheck", "[layer_norm]") {
  using L = const TensorList&;
  SECTION("layer_norm with weight and bias, on 2-d and 3-d inputs") {
    CHECK_GRADCHECK([](L in) { return layer_norm(in[0], {5}, in[1], in[2]); },
                    {param({3, 5}, 1, 2.0), param({5}, 2), param({5}, 3)});
    CHECK_GRADCHECK([](L in) { return layer_norm(in[0], {4}, in[1], in[2]); },
                    {param({2, 3, 4}, 4), param({4}, 5), param({4}, 6)});
  }
  SECTION("layer_norm over a 2-d normalized_shape") {
    CHECK_GRADCHECK([](L in) { return layer_norm(in[0], {3, 4}, in[1], in[2]); },
                    {param({2, 3, 4}, 7), param({3, 4}, 8), param({3, 4}, 9)});
  }
  SECTION("layer_norm without affine, with weight only, with bias only") {
    CHECK_GRADCHECK([](L in) { return layer_norm(in[0], {6}); }, {param({2, 6}, 10)});
    CHECK_GRADCHECK([](L in) { return layer_norm(in[0], {4}, in[1]); }, {param({3, 4}, 11), param({4}, 12)});
    CHECK_GRADCHECK([](L in) { return layer_norm(in[0], {4}, Tensor(), in[1]); },
                    {param({3, 4}, 13), param({4}, 14)});
  }
  SECTION("layer_norm of a 1-d input and of a non-contiguous input") {
    CHECK_GRADCHECK([](L in) { return layer_norm(in[0], {5}, in[1], in[2]); },
                    {param({5}, 15), param({5}, 16), param({5}, 17)});
    CHECK_GRADCHECK([](L in) { return layer_norm(in[0].transpose(0, 1), {3}, in[1], in[2]); },
                    {param({3, 4}, 18), param({3}, 19), param({3}, 20)});
  }
  SECTION("rms_norm with and without weight, 3-d, 2-d normalized_shape") {
    CHECK_GRADCHECK([](L in) { return rms_norm(in[0], {5}, in[1]); }, {param({3, 5}, 21), param({5}, 22)});
    CHECK_GRADCHECK([](L in) { return rms_norm(in[0], {4}); }, {param({2, 3, 4}, 23)});
    CHECK_GRADCHECK([](L in) { return rms_norm(in[0], {3, 4}, in[1]); }, {param({2, 3, 4}, 24), param({3, 4}, 25)});
  }
}

TEST_CASE("fused layer_norm and rms_norm match their composition, forward and backward", "[layer_norm]") {
  struct Case {
    Shape x_shape, normalized_shape;
    bool weight, bias;
  };
  // The (128, 300) case exceeds kParallelGrain: rows run on several threads and the per-thread
  // dweight/dbias partial sums are added up. (300, 300) in double is over 512 KiB: its rows go
  // one by one, the smaller inputs' in groups (layer_norm.cpp).
  const std::vector<Case> cases{
      {{4, 6}, {6}, true, true},      {{2, 3, 4}, {3, 4}, true, true}, {{3, 5}, {5}, false, false},
      {{3, 5}, {5}, true, false},     {{3, 5}, {5}, false, true},      {{128, 300}, {300}, true, true},
      {{300, 300}, {300}, true, true},
  };
  Generator gen(41);
  for (const Case& c : cases) {
    INFO("x " << shape_str(c.x_shape) << ", normalized_shape " << shape_str(c.normalized_shape)
              << (c.weight ? ", weight" : "") << (c.bias ? ", bias" : ""));
    const Tensor x = add(mul(randn(c.x_shape, gen, DType::float64), 2.0), 1.5);
    const Tensor weight = c.weight ? randn(c.normalized_shape, gen, DType::float64) : Tensor();
    const Tensor bias = c.bias ? randn(c.normalized_shape, gen, DType::float64) : Tensor();
    const Tensor dout = randn(c.x_shape, gen, DType::float64);

    TensorList fused_in = leaves({x, weight, bias}), composed_in = leaves({x, weight, bias});
    Tensor fused = layer_norm(fused_in[0], c.normalized_shape, fused_in[1], fused_in[2], 1e-5);
    Tensor composed = composed_layer_norm(composed_in[0], c.normalized_shape, composed_in[1], composed_in[2], 1e-5);
    CHECK_CLOSE("layer_norm y", fused, composed, 1e-13, 1e-12);
    fused.backward(dout);
    composed.backward(dout);
    const char* names[] = {"layer_norm dx", "layer_norm dweight", "layer_norm dbias"};
    for (int k = 0; k < 3; ++k)
      if (fused_in[k].defined()) CHECK_CLOSE(names[k], fused_in[k].grad(), composed_in[k].grad(), 1e-11, 1e-11);

    fused_in = leaves({x, weight});
    composed_in = leaves({x, weight});
    fused = rms_norm(fused_in[0], c.normalized_shape, fused_in[1], 1e-6);
    composed = composed_rms_norm(composed_in[0], c.normalized_shape, composed_in[1], 1e-6);
    CHECK_CLOSE("rms_norm y", fused, composed, 1e-13, 1e-12);
    fused.backward(dout);
    composed.backward(dout);
    CHECK_CLOSE("rms_norm dx", fused_in[0].grad(), composed_in[0].grad(), 1e-11, 1e-11);
    if (c.weight) CHECK_CLOSE("rms_norm dweight", fused_in[1].grad(), composed_in[1].grad(), 1e-11, 1e-11);
  }
}

TEST_CASE("layer_norm's rows in groups and one by one give the same bits", "[layer_norm]") {
  // 1200 rows of 128 floats (600 KiB) go one by one; the same rows as 4 inputs of 300 rows
  // (150 KiB) go in groups. Each row's output and dx are computed alone either way, so they
  // must agree to the bit; dweight and dbias add the rows in another split, so only closely.
  Generator gen(43);
  const Tensor x = add(mul(randn({1200, 128}, gen), 2.0), 1.5);
  const Tensor weight = randn({128}, gen), bias = randn({128}, gen);
  const Tensor dout = randn({1200, 128}, gen);
  for (const bool rms : {false, true}) {
    INFO((rms ? "rms_norm" : "layer_norm"));
    const auto norm = [&](const TensorList& in) {
      return rms ? rms_norm(in[0], {128}, in[1]) : layer_norm(in[0], {128}, in[1], in[2]);
    };
    TensorList whole = leaves({x, weight, bias});
    const Tensor y = norm(whole);
    y.backward(dout);
    Tensor dweight = zeros({128}), dbias = zeros({128});
    for (std::int64_t r0 = 0; r0 < 1200; r0 += 300) {
      TensorList part = leaves({slice(x, 0, r0, r0 + 300), weight, bias});
      const Tensor y_part = norm(part);
      y_part.backward(slice(dout, 0, r0, r0 + 300).contiguous());
      CHECK(y_part.to_vector() == slice(y, 0, r0, r0 + 300).to_vector());
      CHECK(part[0].grad().to_vector() == slice(whole[0].grad(), 0, r0, r0 + 300).to_vector());
      dweight = add(dweight, part[1].grad());
      if (!rms) dbias = add(dbias, part[2].grad());
    }
    CHECK_CLOSE("dweight", whole[1].grad(), dweight, 1e-4, 1e-5);
    if (!rms) CHECK_CLOSE("dbias", whole[2].grad(), dbias, 1e-4, 1e-5);
  }
}

TEST_CASE("layer_norm and rms_norm match PyTorch", "[layer_norm][reference]") {
  const auto& ref = ops_reference();
  for (const std::string op : {"layer_norm", "rms_norm"})
    for (const char* which : {"2d", "3d", "3d_ns2", "noaffine"})
      for (DType dtype : {DType::float64, DType::float32}) {
        const std::string p = op + "." + which + ".";
        INFO(p << " in " << dtype_name(dtype));
        const double tol = dtype == DType::float64 ? 1e-12 : 1e-5;
        Tensor x = ref.get(p + "x", dtype).requires_grad_();
        Tensor weight = ref.contains(p + "weight") ? ref.get(p + "weight", dtype).requires_grad_() : Tensor();
        Tensor bias = ref.contains(p + "bias") ? ref.get(p + "bias", dtype).requires_grad_() : Tensor();
        const Shape normalized_shape = ref.shape_of(p + "normalized_shape");
        const double eps = ref.scalar(p + "eps");
        const Tensor y = op == "layer_norm" ? layer_norm(x, normalized_shape, weight, bias, eps)
                                            : rms_norm(x, normalized_shape, weight, eps);
        CHECK_CLOSE(p + "y", y, ref.get(p + "y"), tol, tol);
        y.backward(ref.get(p + "dout", dtype));
        CHECK_CLOSE(p + "dx", x.grad(), ref.get(p + "dx"), tol, tol);
        if (weight.defined()) CHECK_CLOSE(p + "dweight", weight.grad(), ref.get(p + "dweight"), tol, tol);
        if (bias.defined()) CHECK_CLOSE(p + "dbias", bias.grad(), ref.get(p + "dbias"), tol, tol);
      }
}

TEST_CASE("layer_norm computes only the gradients that are needed", "[layer_norm]") {
  Generator gen(51);
  const Tensor x = randn({3, 4}, gen, DType::float64);  // a constant input
  Tensor weight = randn({4}, gen, DType::float64).requires_grad_();
  const Tensor bias = randn({4}, gen, DType::float64);  // a constant bias
  layer_norm(x, {4}, weight, bias).sum().backward();
  // Σ_rows xhat ⊙ 1 for dweight; each row of xhat sums to 0, so dweight sums to 0 too.
  const Tensor expected = sum(composed_layer_norm(x, {4}, Tensor(), Tensor(), 1e-5), {0});
  CHECK_CLOSE("dweight", weight.grad(), expected, 1e-13, 1e-12);
  CHECK(sum(weight.grad()).item() == Approx(0).margin(1e-12));
}

TEST_CASE("layer_norm stays accurate for a large mean", "[layer_norm]") {
  // x = 1e4 + small noise: E[x²] − E[x]² would cancel away; the two-pass variance does not.
  Tensor x = add(tensor({-1, 0, 1, 2, -2, 0.5, -0.5, 0}, {2, 4}, DType::float64), 1e4);
  const std::vector<double> y = layer_norm(x.to(DType::float32), {4}, Tensor(), Tensor(), 0).to_vector();
  const std::vector<double> expected = layer_norm(sub(x, 1e4), {4}, Tensor(), Tensor(), 0).to_vector();
  for (std::size_t i = 0; i < y.size(); ++i) CHECK(y[i] == Approx(expected[i]).margin(1e-5));
}

TEST_CASE("layer_norm and rms_norm reject mismatched shapes", "[layer_norm][errors]") {
  const Tensor x = zeros({2, 3});
  REQUIRE_THROWS_AS(layer_norm(x, {4}), ShapeError);
  REQUIRE_THROWS_WITH(layer_norm(x, {4}), Catch::Contains(
      "layer_norm: normalized_shape [4] does not match the trailing dims of the input of shape [2, 3]"));
  REQUIRE_THROWS_WITH(rms_norm(x, {2, 3, 1}), Catch::Contains("rms_norm: normalized_shape [2, 3, 1]"));
  REQUIRE_THROWS_WITH(layer_norm(x, {}), Catch::Contains("layer_norm: normalized_shape must have at least one dim"));
  REQUIRE_THROWS_AS(layer_norm(x, {3}, zeros({4})), ShapeError);
  REQUIRE_THROWS_WITH(layer_norm(x, {3}, zeros({4})),
                      Catch::Contains("layer_norm: weight of shape [4] does not match normalized_shape [3]"));
  REQUIRE_THROWS_WITH(layer_norm(x, {3}, zeros({3}), zeros({1, 3})),
                      Catch::Contains("layer_norm: bias of shape [1, 3] does not match normalized_shape [3]"));
  REQUIRE_THROWS_WITH(rms_norm(x, {3}, zeros({2, 3})), Catch::Contains("rms_norm: weight of shape [2, 3]"));
  REQUIRE_THROWS_AS(layer_norm(x, {3}, zeros({3}, DType::float64)), DTypeError);
  REQUIRE_THROWS_WITH(layer_norm(x, {3}, zeros({3}, DType::float64)),
                      Catch::Contains("layer_norm: weight is float64 but the input is float32"));
  REQUIRE_THROWS_AS(layer_norm(x, {3}, Tensor(), Tensor(), -1e-5), ValueError);
}
