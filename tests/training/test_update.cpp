// test_update.cpp — the update step (training/update.hpp): the norm it reports is the one
// before clipping, the clipped gradient is what the optimizer steps with, a non-finite loss or
// gradient skips the step and is named, and after_backward runs between backward and the check.
#include <cmath>

#include <catch2/catch.hpp>
#include <tapegrad/tapegrad.hpp>

using namespace tapegrad;
using Catch::Contains;

TEST_CASE("update: clip, step, and the skip of a non-finite gradient", "[training][update]") {
  Tensor w = tensor({3, 4}, {2}, DType::float64).requires_grad_();
  const nn::NamedTensors params = {{"w", w}};
  optim::SGD opt(params, optim::SGDOptions(0.1));
  // loss = Σ w²/2: grad = w = (3, 4), norm 5; clipped to norm 1: (0.6, 0.8)
  const training::UpdateResult r = training::update(opt, sum(w * w) * 0.5, params, 1.0);
  CHECK(r.ok());
  CHECK(r.grad_norm == Approx(5.0));
  CHECK(w.to_vector()[0] == Approx(3 - 0.06));
  CHECK(w.to_vector()[1] == Approx(4 - 0.08));
  // without clipping the norm is still measured
  bool called = false;
  const training::UpdateResult m = training::update(opt, sum(w * w) * 0.5, params, 0.0, [&] {
    called = true;
    CHECK(w.grad().defined());  // after backward
  });
  CHECK(called);
  CHECK(m.grad_norm == Approx(std::sqrt(2.94 * 2.94 + 3.92 * 3.92)));
  // a NaN gradient: nothing moves, and the problem names the parameter
  const std::vector<double> before = w.to_vector();
  const training::UpdateResult bad = training::update(opt, sum(sqrt(w - 100.0)), params, 1.0);
  CHECK(!bad.ok());
  CHECK(std::isnan(bad.grad_norm));
  CHECK_THAT(bad.problem, Contains("non-finite"));
  CHECK(w.to_vector() == before);
}
