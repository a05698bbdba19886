// test_vec_math.cpp — the vectorizable exp and tanh of autograd/cpu/vec_math.hpp against the C
// library in double: the error bounds its comments state, over a sweep of every 256th float of
// the range, and the special values (±inf, NaN, out of range) that masked softmax rows and
// overflowing GELU inputs rely on.
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>

#include <tapegrad/autograd/ops/gelu.hpp>
#include <tapegrad/autograd/cpu/vec_math.hpp>

#include <catch2/catch.hpp>

using namespace tapegrad;

namespace {

// Units in the last place of float between a float result and the exact value (in double).
double ulps(float got, double exact) {
  const float rounded = static_cast<float>(exact);
  const double ulp = std::nextafter(rounded, std::numeric_limits<float>::infinity()) - rounded;
  return std::abs(static_cast<double>(got) - exact) / ulp;
}

// Calls f(x) for every 256th float in [lo, hi] (bit patterns step by 256: 2^24 of the 2^32).
template <typename F>
void sweep(float lo, float hi, F f) {
  for (float x = lo; x < hi;) {
    f(x);
    const std::uint32_t bits = std::bit_cast<std::uint32_t>(x);
    // Floats ordered by value: for negatives the bit pattern falls as x rises.
    const float next = x < 0 ? std::bit_cast<float>(bits >= 256 + 0x80000000u ? bits - 256 : 0u)
                             : std::bit_cast<float>(bits + 256);
    x = next > x ? next : std::nextafter(x, hi);
  }
}

}  // namespace

TEST_CASE("vec::exp in float is within 1.5 ulp of e^x over its whole range", "[vec_math]") {
  double worst = 0;
  float worst_at = 0;
  std::int64_t n = 0;
  // Results below 1.7e-38 (x < -86.99) are flushed to 0 by design.
  sweep(-86.98f, 88.72f, [&](float x) {
    const double e = ulps(vec::exp(x), std::exp(static_cast<double>(x)));
    if (e > worst) worst = e, worst_at = x;
    ++n;
  });
  INFO(n << " points, worst " << worst << " ulp at x = " << worst_at);
  CHECK(n > 5000000);
  CHECK(worst <= 1.5);  // measured: 1.18
}

TEST_CASE("vec::exp in float: infinities, NaN and the ends of the range as the C library", "[vec_math]") {
  const float inf = std::numeric_limits<float>::infinity();
  CHECK(vec::exp(-inf) == 0.0f);  // a masked score: probability 0
  CHECK(vec::exp(inf) == inf);
  CHECK(std::isnan(vec::exp(std::numeric_limits<float>::quiet_NaN())));
  CHECK(vec::exp(89.0f) == inf);
  CHECK(vec::exp(-88.0f) == 0.0f);
  CHECK(vec::exp(-87.0f) == 0.0f);  // flushed: 1.65e-38 is under the cut
  CHECK(std::abs(vec::exp(88.5f) / std::exp(88.5) - 1) < 3e-7);  // n = 128: finite, near FLT_MAX
  CHECK(vec::exp(88.72f) < inf);
  CHECK(vec::exp(0.0f) == 1.0f);
  CHECK(vec::exp(-0.0f) == 1.0f);
  CHECK(vec::exp(1.0) == std::exp(1.0));  // double: the C library's own
}

TEST_CASE("vec::exp_float_clamped: exp_float's bits inside the range, finite outside it", "[vec_math]") {
  long differ = 0;
  sweep(-87.3f, 88.7f, [&](float x) { differ += vec::exp_float_clamped(x) != vec::exp_float(x); });
  CHECK(differ == 0);
  const float inf = std::numeric_limits<float>::infinity();
  CHECK(vec::exp_float_clamped(-inf) == 0.0f);  // as exp_float: the clamp gives 0
  CHECK(vec::exp_float_clamped(-1000.0f) == 0.0f);
  CHECK(std::isfinite(vec::exp_float_clamped(inf)));
  CHECK(vec::exp_float_clamped(1000.0f) == vec::exp_float_clamped(88.7228317f));
  CHECK(vec::exp_float(1000.0f) == inf);
}

TEST_CASE("vec::tanh_for_gelu's absolute error stays below 2.5e-7", "[vec_math][gelu]") {
  double worst = 0;
  float worst_at = 0;
  sweep(-20.0f, 20.0f, [&](float u) {
    const double e = std::abs(static_cast<double>(vec::tanh_for_gelu(u)) - std::tanh(static_cast<double>(u)));
    if (e > worst) worst = e, worst_at = u;
  });
  INFO("worst absolute error " << worst << " at u = " << worst_at);
  CHECK(worst < 2.5e-7);
  const float inf = std::numeric_limits<float>::infinity();
  CHECK(vec::tanh_for_gelu(100.0f) == 1.0f);
  CHECK(vec::tanh_for_gelu(-100.0f) == -1.0f);
  CHECK(vec::tanh_for_gelu(inf) == 1.0f);
  CHECK(vec::tanh_for_gelu(-inf) == -1.0f);
  CHECK(std::isnan(vec::tanh_for_gelu(std::numeric_limits<float>::quiet_NaN())));
}

TEST_CASE("GELU's tanh form in float is within 4e-7 of float64 times max(1, |x|)", "[vec_math][gelu]") {
  // What the comment on tanh_for_gelu promises: 1 + tanh u is accurate where GELU needs it.
  double worst = 0;
  float worst_at = 0;
  sweep(-12.0f, 12.0f, [&](float x) {
    const double exact = gelu_math::tanh_form(static_cast<double>(x));
    const double e = std::abs(static_cast<double>(gelu_math::tanh_form(x)) - exact) / std::max(1.0, std::abs(exact));
    if (e > worst) worst = e, worst_at = x;
  });
  INFO("worst error " << worst << " at x = " << worst_at);
  CHECK(worst < 4e-7);
}
