// test_step_hooks.cpp — the optimizer's step hooks (PyTorch's register_step_pre_hook and
// register_step_post_hook): they run around every step in registration order, without
// recording, see the weights before and after the update, can renormalize the weights after
// it (what nGPT does to every weight row), are removed by their handles (also from inside a
// hook), and a hook that throws is named in the error.
#include <cmath>
#include <string>
#include <vector>

#include <catch2/catch.hpp>
#include <tapegrad/optim/optim.hpp>
#include <tapegrad/tapegrad.hpp>

using namespace tapegrad;
using Catch::Contains;

namespace {

// A Linear (3 -> 2) in float64 with a gradient from one fixed batch.
std::shared_ptr<nn::Linear> with_grad() {
  manual_seed(5);
  auto lin = std::make_shared<nn::Linear>(nn::LinearOptions(3, 2).dtype(DType::float64));
  Generator gen(6);
  sum(mul(lin->forward(randn({4, 3}, gen, DType::float64)), 0.7)).backward();
  return lin;
}

// The L2 norm of each row of a (rows, cols) tensor.
std::vector<double> row_norms(const Tensor& w) {
  const std::vector<double> v = w.to_vector();
  const auto cols = static_cast<std::size_t>(w.size(1));
  std::vector<double> norms;
  for (std::size_t r = 0; r < v.size() / cols; ++r) {
    double s = 0;
    for (std::size_t c = 0; c < cols; ++c) s += v[r * cols + c] * v[r * cols + c];
    norms.push_back(std::sqrt(s));
  }
  return norms;
}

}  // namespace

TEST_CASE("step hooks: before and after the update, in order, without recording", "[optim][hooks]") {
  auto lin = with_grad();
  optim::AdamW opt(lin->named_parameters(), optim::AdamOptions(0.1).weight_decay(0.0));
  const std::vector<double> before = lin->weight.to_vector();
  std::vector<std::string> order;
  std::vector<double> seen_before, seen_after;
  opt.register_step_pre_hook([&](optim::Optimizer& o) {
    CHECK(&o == &opt);
    CHECK(!is_grad_enabled());
    seen_before = lin->weight.to_vector();
    order.push_back("pre");
  });
  opt.register_step_post_hook([&](optim::Optimizer&) {
    CHECK(!is_grad_enabled());
    seen_after = lin->weight.to_vector();
    order.push_back("post 1");
  });
  opt.register_step_post_hook([&](optim::Optimizer&) { order.push_back("post 2"); });
  opt.step();
  CHECK(order == std::vector<std::string>{"pre", "post 1", "post 2"});
  CHECK(seen_before == before);
  CHECK(seen_after == lin->weight.to_vector());
  CHECK(seen_after != before);  // the update happened between them
}

TEST_CASE("step hooks: a post-hook keeps every weight row on the unit sphere (nGPT)", "[optim][hooks]") {
  auto lin = with_grad();
  optim::AdamW opt(lin->named_parameters(), optim::AdamOptions(0.1).weight_decay(0.0));
  HookHandle renorm = opt.register_step_post_hook(
      [&](optim::Optimizer&) {
        lin->weight.copy_(div(lin->weight, sqrt(sum(mul(lin->weight, lin->weight), {1}, true))));
      },
      "renorm");
  for (int step = 0; step < 3; ++step) {
    opt.step();
    for (double n : row_norms(lin->weight)) CHECK(n == Approx(1.0).epsilon(1e-14));
  }
  renorm.remove();
  opt.step();  // removed: the rows leave the sphere
  bool off = false;
  for (double n : row_norms(lin->weight)) off = off || std::abs(n - 1.0) > 1e-6;
  CHECK(off);
  renorm.remove();  // twice: nothing
}

TEST_CASE("step hooks: removed from inside, and named when they throw", "[optim][hooks]") {
  auto lin = with_grad();
  optim::SGD opt(lin->named_parameters(), optim::SGDOptions(0.1));
  int once = 0;
  HookHandle self;
  self = opt.register_step_pre_hook([&](optim::Optimizer&) {
    ++once;
    self.remove();
  });
  opt.step();
  opt.step();
  CHECK(once == 1);
  opt.register_step_post_hook([](optim::Optimizer&) { throw ValueError("boom"); }, "renorm");
  REQUIRE_THROWS_WITH(opt.step(), Contains("SGD: step post-hook 'renorm' threw: boom"));
  HookHandle outlived;
  {
    optim::SGD short_lived(lin->named_parameters(), optim::SGDOptions(0.1));
    outlived = short_lived.register_step_pre_hook([](optim::Optimizer&) {});
  }
  outlived.remove();  // the optimizer is gone: nothing happens
}
