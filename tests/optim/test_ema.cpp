// test_ema.cpp — the moving average of the weights: its formula step by step (the first
// update copies, as torch.optim.swa_utils.AveragedModel does), the exact swap, the saved
// state and its refusals.
#include <catch2/catch.hpp>
#include <tapegrad/optim/ema.hpp>
#include <tapegrad/tapegrad.hpp>

using namespace tapegrad;
using Catch::Contains;

namespace {

// A float64 "parameter" of two values that the test sets by hand.
struct Param {
  Tensor w = tensor({0.0, 0.0}, {2}, DType::float64);
  void set(double a, double b) {
    w.data<double>()[0] = a;
    w.data<double>()[1] = b;
  }
  nn::NamedTensors named() const { return {{"w", w}}; }
};

}  // namespace

TEST_CASE("EMA: first update copies, then avg += (1 - decay)(w - avg)", "[optim][ema]") {
  Param p;
  optim::ExponentialMovingAverage ema(p.named(), 0.9);
  const std::vector<std::pair<double, double>> trajectory = {{1, -1}, {2, 0}, {4, 3}, {-1, 5}};
  double a0 = 0, a1 = 0;
  for (std::size_t t = 0; t < trajectory.size(); ++t) {
    p.set(trajectory[t].first, trajectory[t].second);
    ema.update();
    if (t == 0) {
      a0 = trajectory[t].first, a1 = trajectory[t].second;
    } else {
      a0 = a0 + (1.0 - 0.9) * (trajectory[t].first - a0);
      a1 = a1 + (1.0 - 0.9) * (trajectory[t].second - a1);
    }
    const Tensor avg = ema.averages().at(0).second;
    // the same operations in the same order; the vectorized loop may fuse a multiply-add
    CHECK(avg.data<double>()[0] == Approx(a0).epsilon(1e-15).margin(1e-16));
    CHECK(avg.data<double>()[1] == Approx(a1).epsilon(1e-15).margin(1e-16));
  }
  CHECK(ema.num_updates() == 4);
  CHECK(a0 != Approx(-1.0));  // the average is not the last value
}

TEST_CASE("EMA: swapping exchanges the bytes, and Swapped restores them", "[optim][ema]") {
  Param p;
  p.set(1.5, 2.5);
  optim::ExponentialMovingAverage ema(p.named(), 0.5);
  ema.update();
  p.set(3.0, -7.0);
  ema.update();  // avg = 1.5 + 0.5·1.5, 2.5 + 0.5·(−9.5)
  {
    optim::ExponentialMovingAverage::Swapped in_use(ema);
    CHECK(p.w.data<double>()[0] == 2.25);
    CHECK(p.w.data<double>()[1] == -2.25);
  }
  CHECK(p.w.data<double>()[0] == 3.0);
  CHECK(p.w.data<double>()[1] == -7.0);
}

TEST_CASE("EMA: a model's averages round-trip and follow training", "[optim][ema]") {
  manual_seed(3);
  auto model = std::make_shared<nn::Linear>(nn::LinearOptions(3, 2).dtype(DType::float32));
  optim::ExponentialMovingAverage ema(model->named_parameters(), 0.99);
  ema.update();
  optim::SGD sgd(model->named_parameters(), optim::SGDOptions(0.1));
  const Tensor x = ones({4, 3});
  for (int i = 0; i < 3; ++i) {
    sgd.zero_grad();
    sum(model->forward(x)).backward();
    sgd.step();
    ema.update();
  }
  optim::ExponentialMovingAverage restored(model->named_parameters(), 0.99);
  restored.load_averages(ema.averages(), ema.num_updates());
  CHECK(restored.num_updates() == 4);
  for (std::size_t i = 0; i < ema.averages().size(); ++i)
    CHECK(restored.averages()[i].second.to_vector<float>() == ema.averages()[i].second.to_vector<float>());
  // the averages lag behind the trained weights
  CHECK(ema.averages()[0].second.to_vector<float>() != model->weight.to_vector<float>());
}

TEST_CASE("EMA: bad decay and mismatched saved averages are refused by name", "[optim][ema]") {
  Param p;
  CHECK_THROWS_WITH(optim::ExponentialMovingAverage(p.named(), 1.0), Contains("decay must be in [0, 1), got 1"));
  CHECK_THROWS_WITH(optim::ExponentialMovingAverage(p.named(), -0.1), Contains("decay"));
  optim::ExponentialMovingAverage ema(p.named(), 0.9);
  CHECK_THROWS_WITH(ema.load_averages({{"v", p.w}}, 1), Contains("no saved average for w"));
  CHECK_THROWS_WITH(ema.load_averages({{"w", zeros({3}, DType::float64)}}, 1), Contains("[3]"));
  CHECK_THROWS_WITH(ema.load_averages({{"w", zeros({2}, DType::float32)}}, 1), Contains("float32"));
}

TEST_CASE("docs/optim.md: the EMA example runs and restores the weights", "[optim][ema][docs]") {
  manual_seed(0);
  auto model = std::make_shared<nn::Linear>(4, 3);
  optim::SGD opt(model->named_parameters(), optim::SGDOptions(0.1));
  std::vector<float> seen;
  auto evaluate = [&](const nn::Linear& m) { seen = m.weight.to_vector<float>(); };
  optim::ExponentialMovingAverage ema(model->named_parameters(), 0.99);
  for (int step = 0; step < 3; ++step) {
    opt.zero_grad();
    pow(model->forward(ones({2, 4})), 2.0).sum().backward();
    opt.step();
    ema.update();
  }
  {
    optim::ExponentialMovingAverage::Swapped averaged(ema);  // the model holds the averages here
    evaluate(*model);
  }  // and its own weights again here, bit for bit
  CHECK(seen == ema.averages()[0].second.to_vector<float>());  // evaluated the averages
  CHECK(model->weight.to_vector<float>() != seen);            // and holds its own weights again
}
