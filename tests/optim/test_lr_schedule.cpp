// test_lr_schedule.cpp — every schedule against its closed form written out here, the Noam
// equivalence, per-group base lrs, the state round trip and the argument checks.
#include <cmath>
#include <numbers>

#include <catch2/catch.hpp>
#include <tapegrad/optim/optim.hpp>
#include <tapegrad/tapegrad.hpp>

using namespace tapegrad;
using namespace tapegrad::optim;
using Catch::Contains;

namespace {

// Two groups with base lrs 0.1 and 0.01: a schedule must keep their ratio.
struct TwoGroups {
  Tensor a = zeros({2}).requires_grad_();
  Tensor b = zeros({3}).requires_grad_();
  SGD opt{std::vector<ParamGroup<SGDOptions>>{{{{"a", a}}, SGDOptions(0.1)}, {{{"b", b}}, SGDOptions(0.01)}}};
};

// Applies the schedule at every step in steps and compares both groups' lrs with
// base·expected(step).
template <typename Expected>
void check_against(LRSchedule& schedule, Optimizer& opt, const std::vector<std::int64_t>& steps, Expected expected) {
  for (std::int64_t step : steps) {
    INFO("step " << step);
    schedule.apply(step);
    CHECK(schedule.step() == step);
    CHECK(opt.lr(0) == Approx(0.1 * expected(step)).epsilon(1e-14));
    CHECK(opt.lr(1) == Approx(0.01 * expected(step)).epsilon(1e-14));
    CHECK(schedule.lr_at(step, 1) == opt.lr(1));
  }
}

const std::vector<std::int64_t> kSteps = {0, 1, 2, 8, 9, 10, 11, 50, 98, 99, 100, 150};

}  // namespace

TEST_CASE("constant and linear warmup", "[optim][schedule]") {
  TwoGroups g;
  SECTION("constant") {
    ConstantSchedule s(g.opt);
    check_against(s, g.opt, kSteps, [](std::int64_t) { return 1.0; });
  }
  SECTION("linear warmup over 10 updates, then constant") {
    LinearWarmup s(g.opt, 10);
    check_against(s, g.opt, kSteps, [](std::int64_t step) { return std::min(1.0, (step + 1) / 10.0); });
    CHECK(s.factor(0) == 0.1);  // the first update already moves
    CHECK(s.factor(9) == 1.0);  // the 10th update has the full lr
  }
  SECTION("no warmup") {
    LinearWarmup s(g.opt, 0);
    CHECK(s.factor(0) == 1.0);
  }
}

TEST_CASE("warmup + cosine decay to a floor", "[optim][schedule]") {
  TwoGroups g;
  const double floor = 0.1;
  WarmupCosine s(g.opt, 10, 100, floor);
  check_against(s, g.opt, kSteps, [&](std::int64_t step) {
    const double t = step + 1;
    if (t <= 10) return t / 10;
    const double p = std::min(1.0, (t - 10) / 90);
    return floor + (1 - floor) * 0.5 * (1 + std::cos(std::numbers::pi * p));
  });
  CHECK(s.factor(9) == 1.0);                             // end of warmup: the peak
  CHECK(s.factor(54) == Approx((1 + floor) / 2));        // t = 55: half way through the decay
  CHECK(s.factor(99) == Approx(floor).epsilon(1e-15));   // t = N: the floor
  CHECK(s.factor(5000) == Approx(floor).epsilon(1e-15));  // and it stays there
}

TEST_CASE("warmup + linear decay", "[optim][schedule]") {
  TwoGroups g;
  WarmupLinear s(g.opt, 10, 100, 0.0);
  check_against(s, g.opt, kSteps, [](std::int64_t step) {
    const double t = step + 1;
    return t <= 10 ? t / 10 : std::max(0.0, 1 - (t - 10) / 90);
  });
  CHECK(s.factor(99) == 0.0);
  WarmupLinear with_floor(g.opt, 0, 4, 0.5);
  CHECK(with_floor.factor(0) == Approx(0.875));  // t = 1: a quarter of the way from 1 to 0.5
  CHECK(with_floor.factor(3) == Approx(0.5));
}

TEST_CASE("inverse square root is the original Transformer (Noam) schedule", "[optim][schedule]") {
  const std::int64_t d_model = 512, warmup = 4000;
  Tensor p = zeros({1}).requires_grad_();
  Adam opt({{"p", p}}, AdamOptions(noam_lr(d_model, warmup)).betas({0.9, 0.98}).eps(1e-9));
  InverseSqrt s(opt, warmup);
  // Vaswani et al. 2017, eq. (3): lrate = d_model^-0.5 · min(step_num^-0.5, step_num · warmup_steps^-1.5)
  for (std::int64_t step_num : {1, 2, 100, 3999, 4000, 4001, 10000, 100000}) {
    INFO("step_num " << step_num);
    s.apply(step_num - 1);
    const double expected = std::pow(d_model, -0.5) *
                            std::min(std::pow(step_num, -0.5), step_num * std::pow(warmup, -1.5));
    CHECK(opt.lr(0) == Approx(expected).epsilon(1e-13));
  }
  CHECK(noam_lr(d_model, warmup, 2.0) == Approx(2 * std::pow(512.0 * 4000.0, -0.5)));
  // Past the peak the lr halves when the step count quadruples.
  CHECK(s.lr_at(4 * 8000 - 1) == Approx(s.lr_at(8000 - 1) / 2));
}

TEST_CASE("step decay", "[optim][schedule]") {
  TwoGroups g;
  StepDecay s(g.opt, 30, 0.5);
  check_against(s, g.opt, {0, 29, 30, 59, 60, 95}, [](std::int64_t step) { return std::pow(0.5, step / 30); });
  CHECK(s.factor(29) == 1.0);
  CHECK(s.factor(30) == 0.5);
  CHECK(s.factor(60) == 0.25);
}

TEST_CASE("a schedule applies step 0 when built, from the lrs the optimizer had", "[optim][schedule]") {
  TwoGroups g;
  WarmupCosine s(g.opt, 4, 20);
  CHECK(s.step() == 0);
  CHECK(g.opt.lr(0) == Approx(0.025));
  CHECK(s.base_lrs() == std::vector<double>{0.1, 0.01});
}

TEST_CASE("schedule state round trip", "[optim][schedule][state]") {
  TwoGroups g;
  WarmupCosine s(g.opt, 10, 100, 0.1);
  s.apply(37);
  const ScheduleState saved = s.state_dict();
  CHECK(saved.schedule == "WarmupCosine");
  CHECK(saved.step == 37);
  CHECK(saved.base_lrs == std::vector<double>{0.1, 0.01});

  // A fresh run: the optimizer starts from its configured lrs, the schedule from step 0.
  TwoGroups fresh;
  WarmupCosine restored(fresh.opt, 10, 100, 0.1);
  restored.load_state_dict(saved);
  CHECK(restored.step() == 37);
  CHECK(fresh.opt.lr(0) == g.opt.lr(0));
  CHECK(fresh.opt.lr(1) == g.opt.lr(1));
  restored.apply(38);
  s.apply(38);
  CHECK(fresh.opt.lr(0) == g.opt.lr(0));

  SECTION("the base lrs come from the state, not from the optimizer's current lr") {
    TwoGroups other;
    other.opt.set_lr(0, 0.7);
    WarmupCosine r(other.opt, 10, 100, 0.1);
    r.load_state_dict(saved);
    CHECK(r.base_lrs() == saved.base_lrs);
    CHECK(other.opt.lr(0) == s.lr_at(37, 0));
  }
  SECTION("mismatches are named") {
    WarmupCosine other_total(fresh.opt, 10, 200, 0.1);
    REQUIRE_THROWS_WITH(other_total.load_state_dict(saved),
                        Contains("WarmupCosine: load_state_dict: the state has total_steps = 100, "
                                 "this schedule total_steps = 200"));
    WarmupLinear linear(fresh.opt, 10, 100, 0.1);
    REQUIRE_THROWS_WITH(linear.load_state_dict(saved), Contains("the state is from WarmupCosine, not WarmupLinear"));
    ScheduleState s3 = saved;
    s3.base_lrs.push_back(1);
    REQUIRE_THROWS_WITH(restored.load_state_dict(s3), Contains("the state has 3 base lrs, the optimizer 2 groups"));
  }
}

TEST_CASE("bad schedule settings are refused", "[optim][schedule][errors]") {
  TwoGroups g;
  REQUIRE_THROWS_WITH(LinearWarmup(g.opt, -1), Contains("LinearWarmup: warmup_steps -1 is negative"));
  REQUIRE_THROWS_WITH(WarmupCosine(g.opt, 10, 10), Contains("WarmupCosine: total_steps 10 must be greater than warmup_steps 10"));
  REQUIRE_THROWS_WITH(WarmupLinear(g.opt, 0, 10, 1.5), Contains("WarmupLinear: floor 1.5 must be in [0, 1]"));
  REQUIRE_THROWS_WITH(InverseSqrt(g.opt, 0), Contains("InverseSqrt: warmup_steps 0 must be >= 1"));
  REQUIRE_THROWS_WITH(StepDecay(g.opt, 0), Contains("StepDecay: step_size 0 must be >= 1"));
  REQUIRE_THROWS_WITH(StepDecay(g.opt, 10, -0.5), Contains("StepDecay: gamma -0.5 must be > 0"));
  REQUIRE_THROWS_WITH(noam_lr(0, 10), Contains("noam_lr: d_model 0"));
  ConstantSchedule s(g.opt);
  REQUIRE_THROWS_WITH(s.apply(-1), Contains("ConstantSchedule: step -1 is negative"));
  REQUIRE_THROWS_WITH(s.lr_at(0, 2), Contains("group 2 out of range (2 groups)"));
}

TEST_CASE("extending a warmup-decay schedule re-plans the decay from the coming step", "[optim][schedule][extend]") {
  for (const bool cosine : {true, false}) {
    INFO((cosine ? "cosine" : "linear"));
    TwoGroups g;
    std::unique_ptr<WarmupDecay> s;
    if (cosine) s = std::make_unique<WarmupCosine>(g.opt, 10, 100, 0.1);
    else s = std::make_unique<WarmupLinear>(g.opt, 10, 100, 0.1);
    const std::int64_t from = 60;
    const double f_from = s->factor(from);
    REQUIRE(s->extend(200, from));
    // continuous where it restarts, decreasing, and at the floor at the new end (update t = 200)
    CHECK(s->factor(from) == Approx(f_from).epsilon(1e-15));
    CHECK(s->factor(from + 1) < f_from);
    CHECK(s->factor(199) == Approx(0.1).epsilon(1e-12));
    CHECK(s->factor(250) == Approx(0.1).epsilon(1e-12));
    // the shape over the re-planned stretch: q = (t - from - 1)/(N - from - 1)
    const double q = (130.0 - from) / (200.0 - from - 1);
    const double shape = cosine ? 0.5 * (1 + std::cos(std::numbers::pi * q)) : 1 - q;
    CHECK(s->factor(130) == Approx(0.1 + (f_from - 0.1) * shape).epsilon(1e-14));
    // the steps before stay as they were planned
    CHECK(s->factor(5) == Approx(0.6).epsilon(1e-15));
    // the settings say so, and a schedule built from them continues identically
    const ScheduleState saved = s->state_dict();
    REQUIRE(saved.hyper_parameters.size() == 5);
    CHECK(saved.hyper_parameters[1] == std::pair<std::string, double>{"total_steps", 200.0});
    CHECK(saved.hyper_parameters[3] == std::pair<std::string, double>{"replan_step", 60.0});
    TwoGroups fresh;
    std::unique_ptr<WarmupDecay> r;
    if (cosine) r = std::make_unique<WarmupCosine>(fresh.opt, 10, 200, 0.1);
    else r = std::make_unique<WarmupLinear>(fresh.opt, 10, 200, 0.1);
    REQUIRE_THROWS_WITH(r->load_state_dict(saved), Contains("the state's settings do not match"));
    r->replan(60, f_from);
    r->load_state_dict(saved);
    for (std::int64_t step : {0, 9, 60, 61, 120, 199}) CHECK(r->factor(step) == s->factor(step));
    // the end only grows
    REQUIRE_THROWS_WITH(s->extend(150, 160), Contains("extend: total_steps 150 must be above the planned 200"));
  }
}

TEST_CASE("extending in the warm-up moves the end only, after the end, the lr stays at the floor", "[optim][schedule][extend]") {
  TwoGroups g;
  WarmupCosine s(g.opt, 10, 100, 0.2);
  REQUIRE(s.extend(300, 3));  // still warming up: the whole cosine is stretched, no re-plan
  CHECK(s.hyper_parameters().size() == 3);
  WarmupCosine planned(g.opt, 10, 300, 0.2);
  for (std::int64_t step : {0, 3, 9, 10, 150, 299}) CHECK(s.factor(step) == planned.factor(step));
  WarmupCosine ended(g.opt, 10, 100, 0.2);
  REQUIRE(ended.extend(150, 120));  // its decay is over: from the floor down to the floor
  for (std::int64_t step : {120, 130, 149, 200}) CHECK(ended.factor(step) == Approx(0.2).epsilon(1e-15));
  // the schedules without an end have nothing to move
  LinearWarmup warmup(g.opt, 5);
  InverseSqrt noam(g.opt, 5);
  ConstantSchedule constant(g.opt);
  StepDecay decay(g.opt, 10);
  for (LRSchedule* other : std::vector<LRSchedule*>{&warmup, &noam, &constant, &decay}) {
    INFO(other->name());
    const HyperParameters before = other->hyper_parameters();
    CHECK(!other->extend(1000, 50));
    CHECK(other->hyper_parameters() == before);
  }
}
