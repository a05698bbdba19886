// depth_study_summary_test.cpp — the sums the depth study's verdicts rest on
// (examples/studies/depth_study/summary.hpp): mean ± spread, the 95% intervals and what they
// call, the best learning rate of a sweep, the deepest trainable depth, the droppable blocks,
// the norm-gradient trend of claim 11, and the setups' names. Expected values are worked by
// hand (or from a t table) in the comments.
#include <catch2/catch.hpp>

#include <cmath>

#include "depth_study/summary.hpp"

using namespace depth_study;

namespace {
TrainedRecord run(const std::string& stage, const std::string& placement, std::int64_t depth, double lr, std::uint64_t seed,
                  const std::string& outcome, double val, const Setup& setup = {}) {
  TrainedRecord r;
  r.stage = stage, r.variant = &variant_from_name(placement), r.depth = depth, r.lr = lr, r.seed = seed, r.setup = setup;
  r.outcome = outcome;
  r.train.val_loss = val;
  r.train.status = outcome == "diverged" ? "non-finite" : "ok";
  return r;
}
}  // namespace

TEST_CASE("depth study: mean ± spread over seeds skips what diverged") {
  const Stat s = stat_of({1.0, 2.0, 3.0, NAN});
  CHECK(s.n == 3);
  CHECK(s.mean == Approx(2.0));
  CHECK(s.sd == Approx(1.0));  // the sample standard deviation
  CHECK(fmt_stat(s) == "2 ± 1");
  CHECK(fmt_stat(stat_of({})) == "–");
  CHECK(fmt_stat(stat_of({0.5})) == "0.5");
}

TEST_CASE("depth study: the best lr is the vertex of the parabola in log(lr)") {
  Settings s;
  s.lr_sweep = {1e-3, 2e-3, 4e-3, 8e-3};
  s.lr_depth = 6;
  Results r;
  const double best = 3e-3;  // the losses are a parabola in log(lr) with its vertex here
  for (double lr : s.lr_sweep)
    r.trained.push_back(run("lr", "pre", 6, lr, 1, "trains", 2.0 + std::pow(std::log(lr / best), 2), s.setup));
  CHECK(best_lr(r, s, "pre", 1) == Approx(best).epsilon(1e-9));
  CHECK(std::isnan(best_lr(r, s, "post", 1)));  // not run
  // The best at the end of the sweep is that end; a diverged neighbour counts as no parabola.
  Results ends;
  for (double lr : s.lr_sweep) ends.trained.push_back(run("lr", "pre", 6, lr, 1, "trains", 3.0 - lr, s.setup));
  CHECK(best_lr(ends, s, "pre", 1) == Approx(8e-3));
}

TEST_CASE("depth study: the best lr of any sweep (the stream stage's at each depth)") {
  Settings s;
  Results r;
  const double best = 3e-3;
  for (double lr : {1e-3, 3e-3, 1e-2})
    r.trained.push_back(run("stream", "completep", 8, lr, 1, "trains", 2.0 + std::pow(std::log(lr / best), 2), s.setup));
  const LrSweep sweep{"stream", 8, {1e-3, 3e-3, 1e-2}, s.setup};
  CHECK(best_lr(r, sweep, "completep", 1) == Approx(best).epsilon(1e-9));
  CHECK(best_lr_edge(r, sweep, "completep", 1) == 0);
  CHECK(std::isnan(best_lr(r, LrSweep{"stream", 2, {1e-3, 3e-3, 1e-2}, s.setup}, "completep", 1)));  // not at that depth
}

TEST_CASE("depth study: the steps to reach a loss, and one run's steps against another's") {
  TrainResult fast, slow;
  // losses falling by 0.1 a step from 3.0 (fast) and by 0.05 (slow), 20 steps each
  for (int i = 0; i < 20; ++i) fast.loss.push_back(3.0 - 0.1 * i), slow.loss.push_back(3.0 - 0.05 * i);
  fast.steps_done = slow.steps_done = 20;
  // the final loss is the mean of the last tenth (2 steps), as train() computes it
  fast.final_loss = (fast.loss[18] + fast.loss[19]) / 2, slow.final_loss = (slow.loss[18] + slow.loss[19]) / 2;
  // A run reaches its own final loss at its last step.
  CHECK(steps_to_reach(fast, fast.final_loss) == 20);
  CHECK(steps_to_reach(slow, slow.final_loss) == 20);
  CHECK(steps_to_reach(fast, 2.05) == 11);
  CHECK(std::isnan(steps_to_reach(slow, 1.0)));  // never
  // fast reaches slow's final loss (2.075) at step 11 of 20: 0.55 of the steps
  CHECK(relative_steps(fast, slow) == Approx(11.0 / 20));
  // slow ends above fast's final loss (1.15): fast's 20 steps over the 11 it needed for slow's
  CHECK(relative_steps(slow, fast) == Approx(20.0 / 11));
  CHECK(relative_steps(fast, fast) == 1);
  TrainResult diverged = fast;
  diverged.status = "non-finite", diverged.final_loss = NAN;
  CHECK(std::isnan(relative_steps(diverged, slow)));
}

TEST_CASE("depth study: the deepest trainable depth stops at the first failure") {
  Settings s;
  s.depths = {3, 6, 12, 24};
  s.lrs = {1e-3};
  s.deep_depths = {48};
  s.deep_lr = 5e-4;
  Results r;
  r.trained.push_back(run("grid", "post", 3, 1e-3, 1, "trains", 3.0));
  r.trained.push_back(run("grid", "post", 6, 1e-3, 1, "trains", 3.0));
  r.trained.push_back(run("grid", "post", 12, 1e-3, 1, "plateau", 3.6));
  r.trained.push_back(run("grid", "post", 24, 1e-3, 1, "trains", 3.0));  // deeper success does not count
  CHECK(deepest_trainable(r, s, "post", 1e-3, 1) == 6);
  r.trained.push_back(run("grid", "pre", 3, 1e-3, 1, "trains", 3.0));
  r.trained.push_back(run("grid", "pre", 48, 5e-4, 1, "trains", 3.0));  // a deep depth, at --deep-lr
  CHECK(deepest_trainable(r, s, "pre", 1e-3, 1) == 48);
  r.trained.push_back(run("grid", "none", 3, 1e-3, 1, "diverged", NAN));
  CHECK(deepest_trainable(r, s, "none", 1e-3, 1) == 0);
  CHECK(grid_depths(s) == std::vector<std::int64_t>{3, 6, 12, 24, 48});
  CHECK(lrs_at(s, 48) == std::vector<double>{5e-4});
}

TEST_CASE("depth study: a block is droppable when skipping it costs less than the threshold") {
  TrainedRecord r = run("grid", "pre", 4, 1e-3, 1, "trains", 2.0);
  r.skip_losses = {2.5, 2.01, 2.03, 2.019};  // +25%, +0.5%, +1.5%, +0.95%
  CHECK(droppable_share(r, 0.01) == Approx(0.5));
  CHECK(droppable_share_deep_half(r, 0.01) == Approx(0.5));  // blocks 3 and 4
  CHECK(droppable_share(r, 0.3) == Approx(1.0));
}

TEST_CASE("depth study: setups and outcomes") {
  const Setup s = Setup::parse("tied:gpt2:15");
  CHECK(s.tied_head);
  CHECK(s.init == "gpt2");
  CHECK(s.warmup == 15);
  CHECK(s.name() == "tied:gpt2:15");
  CHECK_THROWS_WITH(Setup::parse("tide:gpt2:15"), Catch::Contains("tied or untied"));
  CHECK_THROWS_WITH(Setup::parse("tied:gpt3:15"), Catch::Contains("gpt2-unscaled"));
  CHECK_THROWS_WITH(Setup::parse("tied:gpt2"), Catch::Contains("HEAD:INIT:WARMUP"));
  CHECK_THROWS_WITH(Setup::parse("tied:gpt2:x"), Catch::Contains("number of steps"));
  TrainResult t;  // trains: the final loss at least the margin below the plateau of its batches
  t.plateau = 3.2;
  t.final_loss = 3.0;
  CHECK(outcome_of(t, 0.05) == "trains");
  t.final_loss = 3.17;
  CHECK(outcome_of(t, 0.05) == "plateau");
  t.status = "non-finite";
  CHECK(outcome_of(t, 0.05) == "diverged");
}

TEST_CASE("depth study: Student t quantiles for a 95% interval") {
  CHECK(t_quantile_975(1) == Approx(12.706));
  CHECK(t_quantile_975(2) == Approx(4.303));
  CHECK(t_quantile_975(9) == Approx(2.262));
  CHECK(t_quantile_975(30) == Approx(2.042));
  // beyond the table, the Cornish–Fisher series: t(60) = 2.000, t(120) = 1.980, t(∞) = 1.960
  CHECK(t_quantile_975(60) == Approx(2.000).margin(1e-3));
  CHECK(t_quantile_975(120) == Approx(1.980).margin(1e-3));
  CHECK(t_quantile_975(100000) == Approx(1.960).margin(1e-3));
  CHECK(std::isnan(t_quantile_975(0)));
}

TEST_CASE("depth study: t-intervals of a mean, of paired differences, and Welch's") {
  // {1,2,3}: mean 2, sd 1, half-width 4.303 · 1/√3 = 2.4843
  const Interval i = t_interval({1.0, 2.0, 3.0});
  CHECK(i.n == 3);
  CHECK(i.estimate == Approx(2.0));
  CHECK(i.low == Approx(2.0 - 2.48434).epsilon(1e-4));
  CHECK(i.high == Approx(2.0 + 2.48434).epsilon(1e-4));
  CHECK(fmt_interval(i) == "2 [-0.484, 4.48] (t, 3 seeds)");
  // Paired: the differences {2,3,4} (mean 3, sd 1); a seed missing in one of them drops out.
  const Interval p = paired_t_interval({3.0, 5.0, 7.0, 9.0}, {1.0, 2.0, 3.0, NAN});
  CHECK(p.n == 3);
  CHECK(p.low == Approx(3.0 - 2.48434).epsilon(1e-4));
  CHECK(fmt_interval(p) == "3 [0.516, 5.48] (paired t, 3 seeds)");
  CHECK(fmt_interval(paired_t_interval({1.0}, {0.5})) == "0.5 (paired t, 1 seed: no interval)");
  // Welch: a = {1,2,3} (var 1), b = {4,5,6,7} (var 5/3); se² = 1/3 + 5/12 = 0.75,
  // ν = 0.75² / ((1/3)²/2 + (5/12)²/3) = 4.96 → 4 (t = 2.776); −3.5 ± 2.776 · 0.8660
  const Interval wl = welch_t_interval({1.0, 2.0, 3.0}, {4.0, 5.0, 6.0, 7.0});
  CHECK(wl.estimate == Approx(-3.5));
  CHECK(wl.low == Approx(-3.5 - 2.40409).epsilon(1e-4));
  CHECK(wl.high == Approx(-3.5 + 2.40409).epsilon(1e-4));
  // A ratio on the log scale: a/b = 2 and 8, geometric mean 4
  const Interval r = paired_log_ratio_interval({2.0, 8.0}, {1.0, 1.0});
  CHECK(r.estimate == Approx(4.0));
  CHECK(r.log_scale);
  CHECK(r.low < 1.0);  // two seeds: t = 12.7, very wide
  CHECK(r.low * r.high == Approx(16.0));  // symmetric around 4 on the log scale
}

TEST_CASE("depth study: Wilson's interval of a proportion") {
  // 8/10: (0.8 + 0.19207 ± 1.96 · √(0.016 + 0.0096)) / 1.38415 = [0.490, 0.943]
  const Interval w = wilson_interval(8, 10);
  CHECK(w.estimate == Approx(0.8));
  CHECK(w.low == Approx(0.4902).margin(1e-3));
  CHECK(w.high == Approx(0.9433).margin(1e-3));
  // 0/10: the interval keeps a width, [0, 0.278], where p ± 1.96·√(p(1−p)/n) would be [0, 0]
  CHECK(wilson_interval(0, 10).low == Approx(0.0).margin(1e-12));
  CHECK(wilson_interval(0, 10).high == Approx(0.2775).margin(1e-3));
  CHECK(std::isnan(wilson_interval(0, 0).estimate));
}

TEST_CASE("depth study: the call flips when the interval crosses 0") {
  const std::vector<double> post = {1.0, 2.0, 3.0};
  // differences {2,3,4}: [0.52, 5.48], wholly above 0
  CHECK(judge(paired_t_interval({3.0, 5.0, 7.0}, post), 0, 0.1) == Call::supported);
  // differences {0,1,2}: [−1.48, 3.48] holds 0 and reaches beyond ±0.1
  const Interval open = paired_t_interval({1.0, 3.0, 5.0}, post);
  CHECK(judge(open, 0, 0.1) == Call::inconclusive);
  CHECK(seeds_needed(open, 0) == 19);  // 3 · (2.4843 / 1)² = 18.5
  // differences {−3,−2,−1}: [−4.48, 0.48] still holds 0; {−3,−2.5,−2}: [−3.74, −1.26], the other direction
  CHECK(judge(paired_t_interval({-2.0, 0.0, 2.0}, post), 0, 0.1) == Call::inconclusive);
  CHECK(judge(paired_t_interval({-2.0, -0.5, 1.0}, post), 0, 0.1) == Call::not_supported);
  // differences {0.01, 0.02, 0.03}: [−0.005, 0.045], inside the equivalence band ±0.1
  CHECK(judge(paired_t_interval({1.01, 2.02, 3.03}, post), 0, 0.1) == Call::not_supported);
  CHECK(judge(paired_t_interval({1.01}, {1.0}), 0, 0.1) == Call::too_few);
  // a ratio: the band is (1/1.1, 1.1); ratios 1.02 and 1.03 have a 2-seed interval [0.96, 1.10]
  CHECK(judge(paired_log_ratio_interval({1.02, 1.03}, {1.0, 1.0}), 1, 0.1) == Call::not_supported);
  CHECK(judge(paired_log_ratio_interval({1.5, 1.6, 1.55}, {1.0, 1.0, 1.0}), 1, 0.1) == Call::supported);
}

TEST_CASE("depth study: the norm-gradient printout's trend (claim 11)") {
  const std::int64_t warmup = 10;
  std::vector<double> steady(100, 1.0), vanishing, exploding(100, 1.0);
  for (int k = 0; k < 100; ++k) vanishing.push_back(std::pow(10.0, -3.0 * k / 99));  // 1 → 0.001
  exploding[70] = 150;  // one step above 100 × the first tenth
  CHECK(norm_grad_trend(steady, warmup) == "steady");
  CHECK(norm_grad_trend(vanishing, warmup) == "vanishing");
  CHECK(norm_grad_trend(exploding, warmup) == "exploding");
  std::vector<double> stopped = steady;
  stopped.push_back(INFINITY);  // a non-finite value printed: exploding, however early
  CHECK(norm_grad_trend(stopped, warmup) == "exploding");
  // The warm-up is not read: large norms while the lr ramps up, then steady
  std::vector<double> ramp = steady;
  for (int k = 0; k < 10; ++k) ramp[k] = 1000;
  CHECK(norm_grad_trend(ramp, warmup) == "steady");
  CHECK(norm_grad_trend(ramp, 0) == "vanishing");  // read from step 1 it would look like a fall
  // Stopped inside the warm-up: the whole trace is read
  CHECK(norm_grad_trend({1.0, 1.0, 500.0}, warmup) == "exploding");
  // No gradient at all: vanishing; one that appears later: steady; no trace: no class
  CHECK(norm_grad_trend(std::vector<double>(50, 0.0), warmup) == "vanishing");
  std::vector<double> appears(50, 0.0);
  for (int k = 30; k < 50; ++k) appears[k] = 1.0;
  CHECK(norm_grad_trend(appears, warmup) == "steady");
  CHECK(norm_grad_trend({}, warmup).empty());
  // What the rule read: after 10 warm-up steps, 90 steps, tenths of 9
  const TraceEnds e = trace_ends(exploding, warmup);
  CHECK(e.first == Approx(1.0));
  CHECK(e.last == Approx(1.0));
  CHECK(e.peak == Approx(150.0));
  CHECK(trace_ends(stopped, warmup).non_finite);
}
