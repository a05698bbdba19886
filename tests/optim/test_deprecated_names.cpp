// test_deprecated_names.cpp — the names before PyTorch's, state() and load_state(), still work
// on optimizers and schedules for one release, and do exactly what state_dict() and
// load_state_dict() do.
//
// This is the one place in the project that calls them: everywhere else the build's -Werror
// turns their [[deprecated]] warning into an error, which keeps the tree on the new names.
// Delete this file together with the aliases.
#include <catch2/catch.hpp>
#include <tapegrad/optim/optim.hpp>
#include <tapegrad/tapegrad.hpp>

using namespace tapegrad;

namespace {

// The same small run the optimizer tests use: one Linear layer, a few momentum steps.
struct Run {
  std::shared_ptr<nn::Linear> model;
  optim::SGD opt;
  optim::WarmupCosine schedule;

  Run()
      : model((manual_seed(0), std::make_shared<nn::Linear>(4, 3))),
        opt(model->named_parameters(), optim::SGDOptions(0.1).momentum(0.9)),
        schedule(opt, /*warmup_steps=*/2, /*total_steps=*/10, /*floor=*/0.1) {}

  void step(std::int64_t s) {
    schedule.apply(s);
    opt.zero_grad();
    pow(model->forward(ones({2, 4})), 2.0).sum().backward();
    opt.step();
  }
};

}  // namespace

// Silenced here alone: calling the deprecated names is what this test is for.
#if defined(__GNUC__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
#endif

TEST_CASE("state() and load_state(), deprecated, forward to state_dict() and load_state_dict()",
          "[optim][state]") {
  Run a;
  for (std::int64_t s = 0; s < 3; ++s) a.step(s);

  const optim::OptimizerState old_opt = a.opt.state();
  const optim::OptimizerState new_opt = a.opt.state_dict();
  REQUIRE(old_opt.params.size() == new_opt.params.size());
  for (std::size_t i = 0; i < new_opt.params.size(); ++i)
    CHECK(old_opt.params[i].second.buffer("momentum_buffer").to_vector() ==
          new_opt.params[i].second.buffer("momentum_buffer").to_vector());
  const optim::ScheduleState old_schedule = a.schedule.state();
  CHECK(old_schedule.step == a.schedule.state_dict().step);
  CHECK(old_schedule.base_lrs == a.schedule.state_dict().base_lrs);

  // Loading through the old names resumes the run bit for bit, as the new ones do.
  Run b;
  b.model->weight.copy_(a.model->weight.detach());
  b.model->bias.copy_(a.model->bias.detach());
  b.opt.load_state(old_opt);
  b.schedule.load_state(old_schedule);
  a.step(3);
  b.step(3);
  CHECK(a.model->weight.to_vector() == b.model->weight.to_vector());
  CHECK(b.opt.lr(0) == a.opt.lr(0));

  // The checks are the new names' too: the message names load_state_dict.
  optim::Adam adam(a.model->named_parameters(), optim::AdamOptions(1e-3));
  REQUIRE_THROWS_WITH(adam.load_state(old_opt), Catch::Contains("Adam: load_state_dict: the state is from SGD"));
}

#if defined(__GNUC__)
#pragma GCC diagnostic pop
#endif
