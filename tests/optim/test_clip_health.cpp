// test_clip_health.cpp — gradient clipping on closed-form cases (PyTorch's numbers are in
// test_optim_vs_torch.cpp), its NaN/Inf behaviour, and the numerical-health report.
#include <cmath>
#include <vector>

#include <omp.h>

#include <catch2/catch.hpp>
#include <tapegrad/optim/optim.hpp>
#include <tapegrad/tapegrad.hpp>

using namespace tapegrad;
using namespace tapegrad::optim;
using Catch::Contains;

namespace {

// A leaf of the given values with the given gradient.
Tensor with_grad(const std::vector<double>& grad, DType dtype = DType::float64) {
  Tensor p = zeros({static_cast<std::int64_t>(grad.size())}, dtype).requires_grad_();
  p.set_grad(tensor(grad, {static_cast<std::int64_t>(grad.size())}, dtype));
  return p;
}

}  // namespace

TEST_CASE("clip_grad_norm_ scales all gradients together by max_norm / (norm + 1e-6)", "[optim][clip]") {
  // The global norm of (3, 4) and (12) is 13.
  Tensor a = with_grad({3, 4}), b = with_grad({12});
  Tensor no_grad = zeros({5}, DType::float64).requires_grad_();  // skipped
  const NamedTensors params{{"a", a}, {"none", no_grad}, {"b", b}};
  CHECK(grad_norm(params) == 13);
  const double norm = clip_grad_norm_(params, 6.5);
  CHECK(norm == 13);
  const double c = 6.5 / (13 + 1e-6);
  CHECK(a.grad().to_vector() == std::vector<double>{3 * c, 4 * c});
  CHECK(b.grad().item() == 12 * c);
  CHECK(grad_norm(params) == Approx(6.5));
  CHECK_FALSE(no_grad.grad().defined());
  // Already short enough: untouched.
  const auto before = a.grad().to_vector();
  CHECK(clip_grad_norm_(params, 100) == Approx(6.5));
  CHECK(a.grad().to_vector() == before);
}

TEST_CASE("clip_grad_norm_ with other norms and float32", "[optim][clip]") {
  Tensor a = with_grad({3, -4}, DType::float32), b = with_grad({-12}, DType::float32);
  CHECK(grad_norm({{"a", a}, {"b", b}}, INFINITY) == 12);
  CHECK(grad_norm({{"a", a}, {"b", b}}, 1) == 19);
  CHECK(clip_grad_norm_(std::vector<Tensor>{a, b}, 14, 2) == Approx(13));  // max_norm above the norm: no clip
  CHECK(b.grad().item() == -12);
  CHECK(clip_grad_norm_(std::vector<Tensor>{a, b}, 1.2, INFINITY) == 12);
  CHECK(b.grad().item() == Approx(-1.2).epsilon(1e-6));
  CHECK(a.grad().to_vector()[0] == Approx(0.3).epsilon(1e-6));
  CHECK(a.grad().to_vector()[1] == Approx(-0.4).epsilon(1e-6));
}

TEST_CASE("the gradient norm does not depend on the number of threads", "[optim][clip]") {
  Generator gen(1);
  Tensor p = zeros({300001}).requires_grad_();
  p.set_grad(randn({300001}, gen));
  const NamedTensors params{{"p", p}};
  const double many = grad_norm(params);
  const int threads = omp_get_max_threads();
  omp_set_num_threads(1);
  const double one = grad_norm(params);
  omp_set_num_threads(threads);
  CHECK(one == many);  // bit for bit
  CHECK(many == Approx(std::sqrt(300001.0)).epsilon(0.01));
}

TEST_CASE("clip_grad_norm_ with a NaN or Inf gradient: an error naming it, or PyTorch's behaviour",
          "[optim][clip][health]") {
  Tensor a = with_grad({1, 2}), b = with_grad({NAN, 1, NAN});
  const NamedTensors params{{"fc.weight", a}, {"fc.bias", b}};
  REQUIRE_THROWS_AS(clip_grad_norm_(params, 1.0, 2.0, true), NonFiniteError);
  REQUIRE_THROWS_WITH(clip_grad_norm_(params, 1.0, 2.0, true),
                      Contains("clip_grad_norm_: the total norm of order 2 of the gradients is nan") &&
                          Contains("first non-finite gradient: 'fc.bias' with 2 NaN, 0 Inf") &&
                          Contains("error_if_nonfinite = false"));
  CHECK(a.grad().to_vector() == std::vector<double>{1, 2});  // the error leaves them alone
  // a NaN whose sign bit is set (what -x, 0·-inf or a NaN's negation gives) reads "nan", not "-nan"
  Tensor negative = with_grad({-std::nan(""), 1});
  REQUIRE_THROWS_WITH(clip_grad_norm_({{"w", negative}}, 1.0, 2.0, true),
                      Contains("the gradients is nan (") && !Contains("-nan"));
  REQUIRE_THROWS_WITH(clip_grad_norm_(params, -std::nan("")), Contains("max_norm nan must be >= 0") && !Contains("-nan"));
  // Without the flag: a NaN norm comes back and every gradient is scaled by NaN.
  CHECK(std::isnan(clip_grad_norm_(params, 1.0)));
  CHECK(std::isnan(a.grad().to_vector()[0]));

  // An Inf gradient: the norm is inf, the coefficient 0; finite entries become 0, inf·0 = NaN.
  Tensor c = with_grad({INFINITY, 3});
  CHECK(std::isinf(clip_grad_norm_({{"c", c}}, 1.0)));
  CHECK(std::isnan(c.grad().to_vector()[0]));
  CHECK(c.grad().to_vector()[1] == 0);
  Tensor d = with_grad({-INFINITY});
  REQUIRE_THROWS_WITH(clip_grad_norm_(std::vector<Tensor>{d}, 1.0, 2.0, true),
                      Contains("is inf (first non-finite gradient: 'parameter 0' with 0 NaN, 1 Inf)"));
}

TEST_CASE("clip_grad_value_ clamps elementwise, also through strided gradients", "[optim][clip]") {
  Tensor a = with_grad({-3, -0.5, 0.25, 7, NAN});
  clip_grad_value_({{"a", a}}, 1.0);
  const auto g = a.grad().to_vector();
  CHECK(std::vector<double>(g.begin(), g.begin() + 4) == std::vector<double>{-1, -0.5, 0.25, 1});
  CHECK(std::isnan(g[4]));  // as torch.clamp
  // A transposed (non-contiguous) gradient is clipped in place too.
  Tensor w = zeros({3, 2}, DType::float64).requires_grad_();
  w.set_grad(tensor({1, -5, 2, 6, -3, 0.5}, {2, 3}, DType::float64).transpose(0, 1));
  REQUIRE_FALSE(w.grad().is_contiguous());
  clip_grad_value_(std::vector<Tensor>{w}, 2.0);
  CHECK(w.grad().to_vector() == std::vector<double>{1, 2, -2, -2, 2, 0.5});
  clip_grad_norm_(std::vector<Tensor>{w}, 1.0);
  CHECK(grad_norm({{"w", w}}) == Approx(1).epsilon(1e-6));
}

TEST_CASE("clipping arguments are checked", "[optim][clip][errors]") {
  Tensor a = with_grad({1});
  REQUIRE_THROWS_WITH(clip_grad_norm_({{"a", a}}, -1), Contains("clip_grad_norm_: max_norm -1 must be >= 0"));
  REQUIRE_THROWS_WITH(clip_grad_norm_({{"a", a}}, 1, 0), Contains("clip_grad_norm_: norm_type 0 must be > 0 (or inf)"));
  REQUIRE_THROWS_WITH(clip_grad_value_({{"a", a}}, -0.1), Contains("clip_grad_value_: clip_value -0.1 must be >= 0"));
  CHECK(clip_grad_norm_(NamedTensors{}, 1.0) == 0);  // no gradients: norm 0, as PyTorch
}

TEST_CASE("check_health names the first non-finite loss, gradient or value", "[optim][health]") {
  Tensor a = with_grad({1, 2}), b = with_grad({3, INFINITY, NAN, NAN}), c = with_grad({NAN});
  const NamedTensors params{{"embed.weight", a}, {"blocks.0.fc.weight", b}, {"head.bias", c}};
  const Tensor finite_loss = scalar_tensor(0.5, DType::float64);

  SECTION("a bad loss comes first") {
    const HealthReport r = check_health(scalar_tensor(NAN, DType::float64), params);
    CHECK_FALSE(r.ok);
    CHECK(r.where == "loss");
    CHECK(r.message == "non-finite loss: 1 NaN, 0 Inf of 1 elements []");
  }
  SECTION("then the gradients, in parameter order") {
    const HealthReport r = check_health(finite_loss, params);
    CHECK_FALSE(r.ok);
    CHECK(r.where == "gradient");
    CHECK(r.name == "blocks.0.fc.weight");
    CHECK(r.count.nan == 2);
    CHECK(r.count.inf == 1);
    CHECK(r.message == "non-finite gradient of 'blocks.0.fc.weight': 2 NaN, 1 Inf of 4 elements [4]");
    REQUIRE_THROWS_AS(require_healthy(finite_loss, params), NonFiniteError);
    REQUIRE_THROWS_WITH(require_healthy(finite_loss, params), Contains("'blocks.0.fc.weight'"));
  }
  SECTION("values only when asked") {
    Tensor v = tensor({1, NAN}, {2}, DType::float64).requires_grad_();
    v.set_grad(tensor({0, 0}, {2}, DType::float64));
    const NamedTensors p2{{"a", a}, {"v", v}};
    CHECK(check_health(finite_loss, p2).ok);
    const HealthReport r = check_health(finite_loss, p2, /*check_values=*/true);
    CHECK(r.where == "value");
    CHECK(r.name == "v");
    CHECK(r.message == "non-finite value of 'v': 1 NaN, 0 Inf of 2 elements [2]");
  }
  SECTION("all finite; missing gradients and an undefined loss are fine") {
    Tensor no_grad = zeros({2}, DType::float64).requires_grad_();
    const HealthReport r = check_health(Tensor(), {{"a", a}, {"n", no_grad}}, true);
    CHECK(r.ok);
    CHECK(r.message.empty());
    CHECK_NOTHROW(require_healthy(finite_loss, {{"a", a}}));
  }
  SECTION("count_nonfinite reads strided float32 tensors") {
    Tensor t = tensor({1, NAN, INFINITY, -INFINITY, 0, NAN}, {2, 3}).transpose(0, 1);
    const NonFiniteCount n = count_nonfinite(t);
    CHECK(n.nan == 2);
    CHECK(n.inf == 2);
    CHECK_FALSE(n.finite());
  }
}

TEST_CASE("count_nonfinite over a tensor large enough for a team of threads counts every element once", "[optim]") {
  const int saved = get_num_threads();
  std::vector<float> values(100000, 1.0f);
  for (std::size_t i = 0; i < values.size(); i += 1000) values[i] = NAN;     // 100
  for (std::size_t i = 7; i < values.size(); i += 4000) values[i] = -INFINITY;  // 25
  const Tensor t = Tensor::from_vector(values, {100, 1000});
  for (const int threads : {1, 2}) {
    set_num_threads(threads);
    INFO(threads << " thread(s)");
    const NonFiniteCount n = count_nonfinite(t);
    CHECK(n.nan == 100);
    CHECK(n.inf == 25);
  }
  set_num_threads(saved);
}
