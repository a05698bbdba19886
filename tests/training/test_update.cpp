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

// Gradient accumulation: 4 micro-batches of 2 rows give the gradient of one batch of 8 rows
// (each micro-batch's mean loss, backward on loss_k / 4), to rounding; the hooks run in order
// (before each backward, told which is the last; after the last; the step replaced).
TEST_CASE("update: micro-batches equal one batch, and the hooks' order", "[training][update]") {
  manual_seed(3);
  const Tensor x = randn({8, 5}, DType::float64), y = randn({8, 1}, DType::float64);
  auto fit = [&](std::int64_t micro_batches, std::vector<std::string>* calls) {
    manual_seed(4);
    nn::Linear layer(nn::LinearOptions(5, 1).dtype(DType::float64));
    const nn::NamedTensors params = layer.named_parameters();
    optim::SGD opt(params, optim::SGDOptions(0.1));
    const std::int64_t rows = 8 / micro_batches;
    auto loss_of = [&](std::int64_t k) {
      const Tensor diff = layer.forward(narrow(x, 0, k * rows, rows)) - narrow(y, 0, k * rows, rows);
      return mean(diff * diff);
    };
    training::UpdateHooks hooks;
    if (calls) {
      hooks.before_backward = [&](bool last) { calls->push_back(last ? "last" : "more"); };
      hooks.after_backward = [&] { calls->push_back("after"); };
      hooks.step = [&] {
        calls->push_back("step");
        opt.step();
      };
    }
    const training::UpdateResult r = training::update(opt, micro_batches, loss_of, params, 0.0, hooks);
    CHECK(r.ok());
    return std::make_pair(r, layer.weight.to_vector());
  };
  std::vector<std::string> calls;
  const auto [whole, w_whole] = fit(1, nullptr);
  const auto [accumulated, w_accumulated] = fit(4, &calls);
  CHECK(calls == std::vector<std::string>{"more", "more", "more", "last", "after", "step"});
  CHECK(std::abs(accumulated.loss - whole.loss) <= 1e-12 * whole.loss);
  CHECK(std::abs(accumulated.grad_norm - whole.grad_norm) <= 1e-12 * whole.grad_norm);
  for (std::size_t i = 0; i < w_whole.size(); ++i) CHECK(std::abs(w_accumulated[i] - w_whole[i]) <= 1e-12);
  Tensor w = zeros({1}, DType::float64).requires_grad_();
  optim::SGD opt({{"w", w}}, optim::SGDOptions(0.1));
  CHECK_THROWS_WITH(training::update(opt, 0, [&](std::int64_t) { return sum(w); }, {{"w", w}}, 0.0),
                    Contains("micro_batches must be at least 1, got 0"));
}
