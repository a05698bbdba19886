// test_optim_docs.cpp — the two C++ examples of docs/optim.md compile, run and do what the
// page says.
//
// Each example is written once, here, between "// BEGIN docs/optim.md example N" and
// "// END ..." markers; the test reads this file back and requires the page's N-th ```cpp block
// to be the same text (without the two-space indent). Edit both together.
#include <fstream>
#include <sstream>

#include <catch2/catch.hpp>
#include <tapegrad/optim/optim.hpp>
#include <tapegrad/tapegrad.hpp>

#include "support/docs.hpp"

using tapegrad::testing::cpp_blocks;
using tapegrad::testing::kDocsDir;
using tapegrad::testing::kRepoRoot;
using tapegrad::testing::read_text;

using namespace tapegrad;

namespace {

// The lines between this file's markers for example n, with their two-space indent removed.
std::string example_source(int n) {
  std::istringstream in(read_text(kRepoRoot + "/tests/optim/test_optim_docs.cpp"));
  const std::string begin = "  // BEGIN docs/optim.md example " + std::to_string(n);
  const std::string end = "  // END docs/optim.md example " + std::to_string(n);
  std::string line, out;
  bool inside = false;
  while (std::getline(in, line)) {
    if (line == end) return out;
    if (inside) out += (line.rfind("  ", 0) == 0 ? line.substr(2) : line) + "\n";
    if (line == begin) inside = true;
  }
  FAIL("no markers for example " << n);
  return out;
}

}  // namespace

TEST_CASE("docs/optim.md: example 1 (a training loop) is this code", "[optim][docs]") {
  CHECK(cpp_blocks(read_text(kDocsDir + "/optim.md")).at(0) == example_source(1));
}

TEST_CASE("docs/optim.md: example 2 (groups by hand, state) is this code", "[optim][docs]") {
  CHECK(cpp_blocks(read_text(kDocsDir + "/optim.md")).at(1) == example_source(2));
}

TEST_CASE("docs/optim.md: example 1 trains", "[optim][docs]") {
  std::ostringstream out;  // the example's progress lines
  // BEGIN docs/optim.md example 1
  manual_seed(0);
  auto model = std::make_shared<nn::Sequential>();
  model->push_back(std::make_shared<nn::Linear>(2, 32));
  model->push_back(std::make_shared<nn::Act>(nn::Activation::tanh));
  model->push_back(std::make_shared<nn::Linear>(32, 1));
  Tensor x = randn({64, 2});
  Tensor y = tanh(matmul(x, tensor({1.5, -2}, {2, 1})));  // the target function

  // Group 0: the Linear weights, decayed; group 1: the biases, not decayed.
  optim::AdamW opt(optim::weight_decay_groups(*model, optim::AdamOptions(1e-2).weight_decay(0.01)));
  optim::WarmupCosine schedule(opt, /*warmup_steps=*/20, /*total_steps=*/300, /*floor=*/0.1);

  const int micro_batches = 4;  // 64 rows as 4 micro-batches of 16
  double loss_value = 0;
  for (std::int64_t step = 0; step < 300; ++step) {
    schedule.apply(step);  // the lr of this update
    opt.zero_grad();
    loss_value = 0;
    for (int m = 0; m < micro_batches; ++m) {
      Tensor loss = mse_loss(model->forward(narrow(x, 0, 16 * m, 16)), narrow(y, 0, 16 * m, 16));
      mul(loss, 1.0 / micro_batches).backward();  // gradients add up to the 64-row mean
      loss_value += loss.item() / micro_batches;
    }
    optim::require_healthy(Tensor(), model->named_parameters());  // names the first NaN/Inf gradient
    const double norm = optim::clip_grad_norm_(model->named_parameters(), /*max_norm=*/1.0);
    opt.step();
    if (step % 100 == 0) out << "step " << step << " loss " << loss_value << " grad norm " << norm << "\n";
  }
  // END docs/optim.md example 1
  INFO(out.str());
  CHECK(loss_value < 0.01);
  CHECK(out.str().rfind("step 0 loss ", 0) == 0);
  // The last update ran at the floor of the cosine: 0.1 × the base lr.
  CHECK(opt.lr(0) == Approx(1e-3));
  CHECK(opt.lr(1) == Approx(1e-3));
  CHECK(opt.group_params(0).size() == 2);  // the two weights
  CHECK(opt.group_params(1).size() == 2);  // the two biases
}

TEST_CASE("docs/optim.md: example 2 restores exactly", "[optim][docs]") {
  // BEGIN docs/optim.md example 2
  manual_seed(0);
  auto model = std::make_shared<nn::Linear>(4, 3);
  optim::SGD opt(std::vector<optim::ParamGroup<optim::SGDOptions>>{
      {{{"weight", model->weight}}, optim::SGDOptions(0.1).momentum(0.9).nesterov(true)},
      {{{"bias", model->bias}}, optim::SGDOptions(0.01).momentum(0.9)},
  });
  optim::LinearWarmup schedule(opt, /*warmup_steps=*/10);

  auto train_step = [&](std::int64_t step) {
    schedule.apply(step);
    opt.zero_grad();
    pow(model->forward(ones({2, 4})), 2.0).sum().backward();
    opt.step();
  };
  for (std::int64_t step = 0; step < 5; ++step) train_step(step);

  // What a checkpoint keeps: the parameters, the optimizer state, the schedule state.
  const Tensor weight = model->weight.detach().clone(), bias = model->bias.detach().clone();
  const optim::OptimizerState opt_state = opt.state_dict();          // momentum buffers, steps, settings
  const optim::ScheduleState schedule_state = schedule.state_dict();  // step 4, base lrs [0.1, 0.01]

  for (std::int64_t step = 5; step < 8; ++step) train_step(step);
  const std::vector<double> expected = model->weight.to_vector();

  // Resume: parameters back, then the optimizer and the schedule.
  model->weight.copy_(weight);
  model->bias.copy_(bias);
  opt.load_state_dict(opt_state);
  schedule.load_state_dict(schedule_state);
  for (std::int64_t step = 5; step < 8; ++step) train_step(step);
  // model->weight.to_vector() == expected, bit for bit
  // END docs/optim.md example 2
  CHECK(model->weight.to_vector() == expected);
  CHECK(schedule_state.step == 4);
  CHECK(schedule_state.base_lrs == std::vector<double>{0.1, 0.01});
  CHECK(opt_state.params.size() == 2);
  CHECK(opt_state.params[0].second.buffers[0].first == "momentum_buffer");
}
