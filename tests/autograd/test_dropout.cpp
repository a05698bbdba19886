// test_dropout.cpp — dropout: statistics of the mask, 1/(1-p) scaling, reproducibility from a
// seed, eval-mode identity, the gradient dout · mask/(1-p), gradcheck, and argument errors.
#include <catch2/catch.hpp>
#include <tapegrad/tapegrad.hpp>

#include <algorithm>
#include <cmath>

#include "support/gradcheck_catch.hpp"

using namespace tapegrad;
using Catch::Contains;

namespace {

using Values = std::vector<double>;

}  // namespace

TEST_CASE("dropout zeroes a fraction p and scales the rest by 1/(1-p)", "[dropout]") {
  const std::int64_t n = 200000;
  const Tensor x = ones({n});
  for (double p : {0.1, 0.3, 0.75}) {
    Generator gen(42);
    const std::vector<float> out = dropout(x, p, true, &gen).to_vector<float>();
    const float scale = static_cast<float>(1.0 / (1.0 - p));
    std::int64_t zeroed = 0, scaled = 0;
    double total = 0;
    for (float v : out) {
      zeroed += v == 0.0f;
      scaled += v == scale;
      total += v;
    }
    INFO("p = " << p);
    CHECK(zeroed + scaled == n);  // every element is either dropped or scaled exactly
    // The fraction zeroed has standard deviation sqrt(p(1-p)/n) <= 0.0012: allow 5 of them.
    CHECK(static_cast<double>(zeroed) / n == Approx(p).margin(0.006));
    CHECK(total / n == Approx(1.0).margin(0.02));  // inverted dropout keeps the mean
  }
}

TEST_CASE("dropout masks are reproducible from the seed", "[dropout]") {
  Generator gen(0);
  const Tensor x = randn({4, 50}, gen);
  Generator g1(7), g2(7), g3(8);
  const Tensor a = dropout(x, 0.5, true, &g1);
  const Tensor b = dropout(x, 0.5, true, &g2);
  const Tensor c = dropout(x, 0.5, true, &g3);
  CHECK(a.to_vector() == b.to_vector());
  CHECK(a.to_vector() != c.to_vector());
  // the generator moved on: the next mask is a new one
  CHECK(dropout(x, 0.5, true, &g1).to_vector() != a.to_vector());

  // without a generator, the default one is used (seeded by manual_seed)
  manual_seed(123);
  const Tensor d = dropout(x, 0.5, true);
  manual_seed(123);
  CHECK(dropout(x, 0.5, true).to_vector() == d.to_vector());
  Generator same_as_default(123);
  CHECK(dropout(x, 0.5, true, &same_as_default).to_vector() == d.to_vector());
}

TEST_CASE("dropout is the identity in eval mode and for p = 0", "[dropout]") {
  const Tensor x = tensor({1, -2, 3}, {3}).requires_grad_();
  Generator gen(1);
  const GeneratorState before = gen.get_state();
  CHECK(dropout(x, 0.5, false, &gen).is_same(x));
  CHECK(dropout(x, 0.0, true, &gen).is_same(x));
  CHECK(gen.get_state().state == before.state);  // nothing drawn

  // p = 1 drops everything (as PyTorch) and so does the gradient
  const Tensor y = dropout(x, 1.0, true, &gen);
  CHECK(y.to_vector() == Values{0, 0, 0});
  y.sum().backward();
  CHECK(x.grad().to_vector() == Values{0, 0, 0});
}

TEST_CASE("dropout gradient is dout times the scaled mask", "[dropout][grad]") {
  Generator gen(5);
  const double p = 0.4;
  const Tensor x = randn({3, 10}, gen, DType::float64).requires_grad_();
  const Tensor dout = randn({3, 10}, gen, DType::float64);
  const Tensor out = dropout(x, p, true, &gen);
  out.backward(dout);

  const Values xv = x.to_vector(), ov = out.to_vector(), gv = dout.to_vector(), dx = x.grad().to_vector();
  std::int64_t kept = 0;
  for (std::size_t i = 0; i < xv.size(); ++i) {
    // randn never gives exactly 0, so out == 0 means "dropped"
    const double mask = ov[i] == 0.0 ? 0.0 : 1.0 / (1.0 - p);
    kept += mask != 0.0;
    CHECK(ov[i] == Approx(xv[i] * mask));
    CHECK(dx[i] == Approx(gv[i] * mask));
  }
  CHECK(kept > 0);
  CHECK(kept < 30);  // both branches were exercised
}

TEST_CASE("dropout gradcheck", "[dropout][gradcheck]") {
  Generator gen(6);
  const Tensor x = randn({4, 5}, gen, DType::float64).requires_grad_();
  // A fresh generator with the same seed in every call: every evaluation uses one mask.
  const auto fn = [](const TensorList& in) {
    Generator mask_gen(99);
    return dropout(in[0].transpose(0, 1), 0.3, true, &mask_gen);
  };
  CHECK_GRADCHECK(fn, {x});
  // and the mask really drops something in this check
  const Values v = fn({x.detach()}).to_vector();
  CHECK(std::count(v.begin(), v.end(), 0.0) > 0);
}

TEST_CASE("dropout errors", "[dropout][errors]") {
  const Tensor x = ones({3});
  REQUIRE_THROWS_AS(dropout(x, -0.1, true), ValueError);
  REQUIRE_THROWS_WITH(dropout(x, -0.1, true), Contains("got -0.1"));
  REQUIRE_THROWS_WITH(dropout(x, 1.5, true), Contains("dropout: probability p must be in [0, 1], got 1.5"));
  REQUIRE_THROWS_WITH(dropout(x, std::nan(""), true), Contains("got nan"));
  REQUIRE_THROWS_AS(dropout(x, 2.0, false), ValueError);  // checked in eval mode too
  REQUIRE_THROWS_AS(dropout(ones({3}, DType::int64), 0.5, true), DTypeError);
  REQUIRE_THROWS_WITH(dropout(ones({3}, DType::int64), 0.5, true),
                      Contains("dropout: expected a float32 or float64 tensor, got int64"));
}
