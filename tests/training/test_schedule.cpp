// test_schedule.cpp — the training kit's schedules by name (training/schedule.hpp): each name
// builds the schedule it documents, the warm-up rule for short runs, a schedule rebuilt from
// its saved state continues exactly (re-planned ones too), unknown names are refused.
#include <catch2/catch.hpp>
#include <tapegrad/tapegrad.hpp>

using namespace tapegrad;
using Catch::Contains;

namespace {
struct OneGroup {
  Tensor w = zeros({2}).requires_grad_();
  optim::SGD opt{{{"w", w}}, optim::SGDOptions(0.5)};
};
}  // namespace

TEST_CASE("schedules by name: cosine, linear, constant (after the warm-up), noam", "[training][schedule]") {
  OneGroup g;
  const training::ScheduleSettings base{"cosine", 10, 100, 0.1};
  auto built = [&](const std::string& name) {
    training::ScheduleSettings s = base;
    s.name = name;
    return training::make_schedule(g.opt, s);
  };
  CHECK(built("cosine")->name() == "WarmupCosine");
  CHECK(built("linear")->name() == "WarmupLinear");
  CHECK(built("noam")->name() == "InverseSqrt");
  const auto constant = built("constant");  // the same warm-up as the others, then constant
  CHECK(constant->name() == "LinearWarmup");
  CHECK(constant->factor(0) == Approx(0.1));
  CHECK(constant->factor(50) == 1.0);
  CHECK(training::schedule_names() == std::vector<std::string>{"cosine", "linear", "constant", "noam"});
  for (const std::string& name : training::schedule_names()) CHECK(built(name)->factor(9) == Approx(1.0));
  REQUIRE_THROWS_WITH(built("exponential"), Contains("unknown schedule 'exponential' (expected cosine, linear, constant or noam)"));
  // a run not longer than its warm-up warms up over its first tenth
  CHECK(training::warmup_steps({"cosine", 100, 50, 0.1}) == 5);
  CHECK(training::warmup_steps({"cosine", 10, 50, 0.1}) == 10);
  CHECK(training::describe(base) == "10 warm-up steps, then cosine decay to 0.1 × lr");
}

TEST_CASE("a schedule rebuilt from its saved state continues exactly, whatever it was", "[training][schedule]") {
  OneGroup g;
  std::vector<std::unique_ptr<optim::LRSchedule>> schedules;
  for (const std::string& name : training::schedule_names()) schedules.push_back(training::make_schedule(g.opt, {name, 10, 100, 0.2}));
  schedules.push_back(std::make_unique<optim::ConstantSchedule>(g.opt));
  schedules.push_back(std::make_unique<optim::StepDecay>(g.opt, 7, 0.5));
  auto extended = training::make_schedule(g.opt, {"linear", 10, 100, 0.2});
  REQUIRE(extended->extend(400, 70));
  schedules.push_back(std::move(extended));
  for (const auto& s : schedules) {
    INFO(s->name());
    s->apply(42);
    OneGroup fresh;
    const auto rebuilt = training::schedule_from_state(fresh.opt, s->state_dict());
    CHECK(rebuilt->name() == s->name());
    CHECK(rebuilt->step() == 42);
    CHECK(fresh.opt.lr(0) == g.opt.lr(0));
    for (std::int64_t step : {0, 5, 42, 69, 70, 71, 99, 150, 399}) CHECK(rebuilt->factor(step) == s->factor(step));
  }
  optim::ScheduleState unknown = schedules[0]->state_dict();
  unknown.schedule = "Cyclic";
  REQUIRE_THROWS_WITH(training::schedule_from_state(g.opt, unknown), Contains("cannot build a schedule of kind Cyclic"));
}
