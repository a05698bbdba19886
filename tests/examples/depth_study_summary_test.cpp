// depth_study_summary_test.cpp — the sums the depth study's verdicts rest on
// (examples/studies/depth_study/summary.hpp): mean ± spread, the best learning rate of a sweep,
// the deepest trainable depth, the droppable blocks, and the setups' names.
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
