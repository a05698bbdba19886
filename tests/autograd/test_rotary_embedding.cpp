// test_rotary_embedding.cpp — the RoPE op (autograd/ops/rotary_embedding.cpp): values and
// gradients against PyTorch (Hugging Face's rotate_half layout and Meta's complex-number
// interleaved layout, tests/reference/make_reference.py), the formula written out per pair,
// the property that makes it a *relative* position code, the offset a KV cache continues
// from, float32 against float64, and errors by name. Gradchecks of first and second order are
// in the op catalogue (test_op_catalog.cpp).
#include <cmath>
#include <vector>

#include "support/gradcheck_catch.hpp"
#include "support/reference.hpp"
#include "support/tensor_diff.hpp"

using namespace tapegrad;
using Catch::Contains;
using tapegrad::testing::max_abs_diff;
using tapegrad::testing::ops_reference;
using tapegrad::testing::param;

TEST_CASE("rotary_embedding matches PyTorch: half split and interleaved, values and gradients", "[rotary][reference]") {
  const auto& ref = ops_reference();
  for (const char* layout : {"half", "interleaved"}) {
    DYNAMIC_SECTION(layout) {
      const std::string p = std::string("rotary.") + layout + ".";
      const Tensor x = ref.get(p + "x").requires_grad_();
      RotaryOptions o;
      o.interleaved = std::string(layout) == "interleaved";
      o.offset = ref.get(p + "offset").to_vector<std::int64_t>()[0];
      o.theta = ref.get(p + "theta").item();
      const Tensor y = rotary_embedding(x, o);
      CHECK_CLOSE("y", y, ref.get(p + "y"), 1e-13, 1e-13);
      y.backward(ref.get(p + "dout"));
      CHECK_CLOSE("dx", x.grad(), ref.get(p + "dx"), 1e-13, 1e-13);
    }
  }
}

TEST_CASE("rotary_embedding is the rotation of each pair by position times frequency", "[rotary]") {
  const std::int64_t B = 2, T = 3, N = 2, D = 6, offset = 4;
  const double theta = 50;
  const Tensor x = param({B, T, N, D}, 11);
  for (bool interleaved : {false, true}) {
    INFO((interleaved ? "interleaved" : "half split"));
    RotaryOptions o;
    o.interleaved = interleaved;
    o.offset = offset;
    o.theta = theta;
    const std::vector<double> y = rotary_embedding(x, o).to_vector(), xv = x.to_vector();
    double worst = 0;
    for (std::int64_t b = 0; b < B; ++b)
      for (std::int64_t t = 0; t < T; ++t)
        for (std::int64_t n = 0; n < N; ++n)
          for (std::int64_t i = 0; i < D / 2; ++i) {
            const std::int64_t base = ((b * T + t) * N + n) * D;
            const std::int64_t ia = base + (interleaved ? 2 * i : i), ib = ia + (interleaved ? 1 : D / 2);
            const double angle = static_cast<double>(offset + t) * std::pow(theta, -2.0 * i / D);
            const double a = xv[ia] * std::cos(angle) - xv[ib] * std::sin(angle);
            const double c = xv[ib] * std::cos(angle) + xv[ia] * std::sin(angle);
            worst = std::max({worst, std::abs(y[ia] - a), std::abs(y[ib] - c)});
          }
    CHECK(worst < 1e-14);
  }
}

TEST_CASE("rotary_embedding: q·k depends on the positions' difference only, and norms are kept", "[rotary]") {
  // One query and one key vector placed at positions (p, p') = (2, 0), (5, 3), (9, 7): the
  // same offset 2, so the same dot product; another offset gives another.
  const Tensor q = param({1, 1, 1, 8}, 3), k = param({1, 1, 1, 8}, 4);
  auto at = [](const Tensor& v, std::int64_t position) {
    RotaryOptions o;
    o.offset = position;
    return rotary_embedding(v, o);
  };
  auto dot = [](const Tensor& a, const Tensor& b) { return sum(a * b).item(); };
  const double d20 = dot(at(q, 2), at(k, 0));
  CHECK(dot(at(q, 5), at(k, 3)) == Approx(d20).epsilon(1e-13));
  CHECK(dot(at(q, 9), at(k, 7)) == Approx(d20).epsilon(1e-13));
  CHECK(std::abs(dot(at(q, 9), at(k, 2)) - d20) > 1e-3);
  CHECK(std::sqrt(dot(at(q, 9), at(q, 9))) == Approx(std::sqrt(dot(q, q))).epsilon(1e-14));  // a rotation
}

TEST_CASE("rotary_embedding: an offset continues the sequence, rotate_heads leaves the other heads", "[rotary]") {
  // The last 2 positions of a 5-token sequence, rotated alone from offset 3, equal the same
  // rows of the whole sequence rotated from 0: what a KV cache relies on.
  const Tensor x = param({2, 5, 3, 4}, 7);
  const Tensor whole = rotary_embedding(x);
  RotaryOptions o;
  o.offset = 3;
  const Tensor tail = rotary_embedding(narrow(x, 1, 3, 2), o);
  CHECK(max_abs_diff(tail, narrow(whole, 1, 3, 2)) == 0);

  RotaryOptions first_two;
  first_two.rotate_heads = 2;  // as on a packed [q | k | v]: v passes through
  const Tensor partial = rotary_embedding(x, first_two);
  CHECK(max_abs_diff(narrow(partial, 2, 0, 2), narrow(whole, 2, 0, 2)) == 0);
  CHECK(max_abs_diff(narrow(partial, 2, 2, 1), narrow(x, 2, 2, 1)) == 0);
  // position 0 is the identity
  CHECK(max_abs_diff(narrow(whole, 1, 0, 1), narrow(x, 1, 0, 1)) == 0);
}

TEST_CASE("rotary_embedding in float32 follows float64, at late positions too", "[rotary]") {
  const Tensor x = param({1, 4, 2, 16}, 9);
  RotaryOptions o;
  o.offset = 100000;  // angles computed in double: float32 keeps its digits
  const Tensor y64 = rotary_embedding(x, o), y32 = rotary_embedding(x.to(DType::float32), o);
  CHECK(y32.dtype() == DType::float32);
  CHECK(max_abs_diff(y32.to(DType::float64), y64) < 1e-5);
}

TEST_CASE("rotary_embedding errors name the op, the shape and the value", "[rotary][errors]") {
  REQUIRE_THROWS_WITH(rotary_embedding(zeros({2, 3, 4})), Contains("rotary_embedding: x must be 4-d") && Contains("[2, 3, 4]"));
  REQUIRE_THROWS_WITH(rotary_embedding(zeros({1, 2, 2, 5})), Contains("D must be even") && Contains("D = 5"));
  REQUIRE_THROWS_AS(rotary_embedding(zeros({1, 2, 2, 4}, DType::int64)), DTypeError);
  RotaryOptions bad_theta;
  bad_theta.theta = 0.5;
  REQUIRE_THROWS_WITH(rotary_embedding(zeros({1, 2, 2, 4}), bad_theta), Contains("theta") && Contains("0.5"));
  RotaryOptions bad_offset;
  bad_offset.offset = -1;
  REQUIRE_THROWS_WITH(rotary_embedding(zeros({1, 2, 2, 4}), bad_offset), Contains("offset") && Contains("-1"));
  RotaryOptions bad_heads;
  bad_heads.rotate_heads = 3;
  REQUIRE_THROWS_WITH(rotary_embedding(zeros({1, 2, 2, 4}), bad_heads), Contains("rotate_heads = 3") && Contains("2 heads"));
}
