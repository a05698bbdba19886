// test_spike_guard.cpp — the z-score window, the skip decision and its message, the state a
// checkpoint carries, and training::update skipping the step the guard refuses.
#include <cmath>

#include <catch2/catch.hpp>
#include <tapegrad/tapegrad.hpp>
#include <tapegrad/training/training.hpp>

using namespace tapegrad;
using Catch::Contains;

TEST_CASE("ZScoreWindow: z against the previous values, NaN until full", "[training][spike]") {
  training::ZScoreWindow w(4);
  for (const double v : {1.0, 2.0, 3.0, 4.0}) CHECK(std::isnan(w.push(v)));
  // mean 2.5, population std sqrt(1.25)
  CHECK(w.push(10.0) == Approx((10.0 - 2.5) / std::sqrt(1.25)));
  // the window now holds 2, 3, 4, 10
  CHECK(w.values() == std::deque<double>{2, 3, 4, 10});
  CHECK(w.mean() == Approx(4.75));
  training::ZScoreWindow flat(2);
  flat.push(1), flat.push(1);
  CHECK(flat.push(1) == 0.0);
  CHECK(flat.push(2) == INFINITY);
  CHECK_THROWS_WITH(training::ZScoreWindow(1), Contains("at least 2"));
}

TEST_CASE("SpikeGuard: skips a loss spike, names it, and the spike joins the window", "[training][spike]") {
  training::SpikeGuard guard({3.0, 0.0, 8});
  for (int i = 0; i < 8; ++i) CHECK(guard.judge(2.0 + 0.01 * (i % 2), 1.0).empty());
  const std::string why = guard.judge(5.0, 1.0);
  CHECK_THAT(why, Contains("loss 5 is") && Contains("standard deviations above the mean 2.005") &&
                      Contains("of the last 8 steps (threshold 3)"));
  CHECK(guard.last_skip() == "loss");
  CHECK(guard.judge(2.0, 100.0).empty());  // the gradient norm is not watched here
  CHECK(guard.last_skip().empty());
}

TEST_CASE("SpikeGuard: gradient-norm spikes, and a lasting change of level stops being skipped", "[training][spike]") {
  training::SpikeGuard guard({0.0, 3.0, 4});
  for (int i = 0; i < 4; ++i) guard.judge(1.0, 1.0 + 0.1 * i);
  CHECK_THAT(guard.judge(1.0, 9.0), Contains("gradient norm 9 is"));
  int skipped = 0;
  for (int i = 0; i < 10; ++i) skipped += !guard.judge(1.0, 9.0 + 0.1 * (i % 2)).empty();
  CHECK(skipped < 4);  // within a window's length the new level is the window
}

TEST_CASE("SpikeGuard: the windows round-trip through checkpoint metadata exactly", "[training][spike]") {
  training::SpikeGuard a({2.5, 2.5, 16}), b({2.5, 2.5, 16});
  for (int i = 0; i < 20; ++i) a.judge(std::sin(i) * 0.1 + 3, std::cos(i) + 2);
  b.restore(a.state());
  for (int i = 20; i < 60; ++i) {
    const double loss = std::sin(i * 1.7) * (i % 13 == 0 ? 3 : 0.1) + 3, norm = std::cos(i) + 2;
    CHECK(a.judge(loss, norm) == b.judge(loss, norm));
  }
  training::SpikeGuard off({0, 0, 16});
  CHECK(off.state().empty());
  CHECK_FALSE(off.on());
  io::Metadata bad = {{"spike.loss", std::string("0x1p+0 nonsense")}};
  CHECK_THROWS_WITH(b.restore(bad), Contains("spike.loss holds 'nonsense'"));
  CHECK_THROWS_WITH(training::SpikeGuard({-1, 0, 16}), Contains("thresholds"));
}

TEST_CASE("training::update: a refused step leaves the parameters as they were", "[training][spike]") {
  manual_seed(5);
  auto model = std::make_shared<nn::Linear>(nn::LinearOptions(3, 1).dtype(DType::float64));
  optim::SGD sgd(model->named_parameters(), optim::SGDOptions(0.5));
  const Tensor x = ones({2, 3}, DType::float64);
  const std::vector<double> before = model->weight.to_vector<double>();
  training::UpdateHooks hooks;
  double seen_loss = 0, seen_norm = 0;
  hooks.skip = [&](double loss, double norm) {
    seen_loss = loss, seen_norm = norm;
    return std::string("a test says no");
  };
  const auto loss_of = [&](std::int64_t) { return sum(model->forward(x)); };
  const training::UpdateResult r = training::update(sgd, 1, loss_of, model->named_parameters(), 0.0, hooks);
  CHECK(r.ok());
  CHECK(r.skipped == "a test says no");
  CHECK(seen_loss == r.loss);
  CHECK(seen_norm == r.grad_norm);
  CHECK(seen_norm > 0);
  CHECK(model->weight.to_vector<double>() == before);
  hooks.skip = [](double, double) { return std::string(); };
  CHECK(training::update(sgd, 1, loss_of, model->named_parameters(), 0.0, hooks).skipped.empty());
  CHECK(model->weight.to_vector<double>() != before);
}
