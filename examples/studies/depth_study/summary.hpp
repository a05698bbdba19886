// summary.hpp — the sums the claims are judged on: a figure over seeds as mean ± spread, the
// 95% intervals the verdicts rest on, the runs of one configuration, the deepest depth that
// still trains, the best learning rate, and the trend of a run's norm-gradient printout.
//
// Spread is the sample standard deviation over the seeds (0 for one seed): "2.31 ± 0.04 (3)".
// It describes the seeds; an interval (Interval below) says what they let us conclude.
#pragma once

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "common/report.hpp"
#include "stages.hpp"

namespace depth_study {

struct Stat {
  double mean = NAN, sd = NAN;
  std::size_t n = 0;
};
// Over the finite values of v (n counts them).
Stat stat_of(const std::vector<double>& v);
// "2.31 ± 0.04" (n = 1: "2.31"; n = 0: "–").
std::string fmt_stat(const Stat& s, int significant = 3);
// A chart point at x: the mean, with a bar over mean ± sd.
void add_point(study::Series& series, double x, const Stat& s);

// ---------------------------------------------------------------- intervals
// Verdicts compare two figures over a handful of seeds (2..10), so they use Student's t, not
// the normal 1.96: with 3 seeds the 95% interval is 2.2 times wider than 1.96 would make it.

// t_{0.975, dof}: the two-sided 95% quantile of Student's t (dof 1..30 from the table, beyond
// by the Cornish–Fisher series z + (z³+z)/4ν + (5z⁵+16z³+3z)/96ν², z = 1.96; NaN for dof 0).
double t_quantile_975(std::size_t dof);

// A 95% interval of a figure: estimate [low, high], from n seeds (or n runs, for a proportion).
struct Interval {
  double estimate = NAN, low = NAN, high = NAN;
  std::size_t n = 0;
  std::string method;      // "t", "paired t", "Welch t", "paired t on log", "Wilson"
  bool log_scale = false;  // a ratio: the interval was taken on log(ratio), then exp'd back
};
// The t-interval of the mean of the finite values of v: x̄ ± t_{0.975,n−1} · sd / √n.
Interval t_interval(const std::vector<double>& v);
// For figures paired by seed (a[i] and b[i] from the same seed, which draws the same
// embeddings and batches in both): the t-interval of the differences a[i] − b[i], over the
// seeds where both are finite. Pairing removes the seed-to-seed variation both share.
Interval paired_t_interval(const std::vector<double>& a, const std::vector<double>& b);
// For unpaired groups: Welch's interval of mean(a) − mean(b) = Δ ± t_{0.975,ν} · √(sa²/na + sb²/nb),
// ν = (sa²/na + sb²/nb)² / ((sa²/na)²/(na−1) + (sb²/nb)²/(nb−1)) (Welch–Satterthwaite; ν is
// rounded down, which widens the interval a little).
Interval welch_t_interval(const std::vector<double>& a, const std::vector<double>& b);
// A ratio paired by seed, a[i] / b[i] (both > 0): the paired t-interval of log a − log b,
// exp'd back: the geometric mean of the ratios and its interval. A ratio's spread is
// multiplicative (1.5 and 1/1.5 are equally far from 1), so the log is its natural scale.
Interval paired_log_ratio_interval(const std::vector<double>& a, const std::vector<double>& b);
// Wilson's score interval of a proportion k/n (good down to n of a few and k of 0 or n, where
// the plain p ± 1.96·√(p(1−p)/n) collapses to a point):
// (p + z²/2n ± z·√(p(1−p)/n + z²/4n²)) / (1 + z²/n), z = 1.96. NaN for n = 0.
Interval wilson_interval(std::size_t k, std::size_t n);
// "0.12 [0.03, 0.21] (paired t, 3 seeds)"; one seed: "0.12 (paired t, 1 seed: no interval)".
std::string fmt_interval(const Interval& i, int significant = 3);

// What an interval says about a claimed effect `estimate > null` (null 0 for a difference, 1
// for a ratio):
//   supported      the interval lies wholly above null;
//   not_supported  it lies wholly below null (the other direction), or wholly inside the
//                  equivalence band (null − margin, null + margin) (for a ratio (null/margin',
//                  null·margin') with margin' = 1 + margin): no effect of a size that matters;
//   inconclusive   neither: it holds null and reaches beyond the band;
//   too_few        fewer than 2 seeds: no interval.
enum class Call { supported, not_supported, inconclusive, too_few };
Call judge(const Interval& i, double null_value, double margin);
// Roughly how many seeds would make the interval exclude null, if the effect stayed what it
// is: n · (half-width / |effect|)² (the half-width shrinks as 1/√n; the t quantile's fall is
// ignored, so this errs high for small n). 0 when the effect is 0 (no number of seeds does).
std::size_t seeds_needed(const Interval& i, double null_value);

// ---------------------------------------------------------------- the norm-gradient printout
// The seed article's diagnostic (claim 11) reads the norm layers' gradient norm per step:
// "→ 0: vanishing gradient, lr too low; → ∞: activate gradient clipping". The trace read is
// TrainResult::norm_grad_norm after the warm-up steps (the lr ramp moves it by design); of
// that part, with `first` and `last` the means of its first and last tenth:
//   exploding  a printed value is non-finite, or one is above 100 · first
//   vanishing  last < 0.01 · first (two orders of magnitude down), or first = last = 0
//   steady     otherwise (first = 0 < last included: the norms start to get a gradient)
//   ""         no trace (no step reached its backward)
// When the run stopped inside the warm-up (fewer than 2 steps after it) the whole trace is read.
std::string norm_grad_trend(const std::vector<double>& trace, std::int64_t warmup);
// What the rule reads: the means of the first and last tenth of the trace after the warm-up,
// its peak there, and whether any printed value is non-finite (then first, last, peak are NaN).
struct TraceEnds {
  double first = NAN, last = NAN, peak = NAN;
  bool non_finite = false;
};
TraceEnds trace_ends(const std::vector<double>& trace, std::int64_t warmup);

// The runs of a stage with this placement, depth, lr and setup, one per seed.
std::vector<const TrainedRecord*> runs_of(const Results& r, const std::string& stage, const std::string& placement,
                                          std::int64_t depth, double lr, const Setup& setup);
// How many of them trained: "3/3".
std::string trains_count(const std::vector<const TrainedRecord*>& runs);
std::size_t count_outcome(const std::vector<const TrainedRecord*>& runs, const std::string& outcome);
// Whether most seeds (more than half) trained.
bool mostly_trains(const std::vector<const TrainedRecord*>& runs);
// Mean ± spread of the validation loss of the runs that did not diverge.
Stat val_stat(const std::vector<const TrainedRecord*>& runs);

// The profile runs of one placement and depth under one init.
std::vector<const ProfileRecord*> profile_of(const Results& r, const std::string& placement, std::int64_t depth,
                                             const std::string& init);
// ‖∇θ_1‖ / ‖∇θ_L‖ at initialization: below 1, the bottom block gets less gradient than the top one.
double bottom_to_top_ratio(const Snapshot& s);

// Mean over layers of cos(h_l, h_{l-1}) after training.
double mean_cosine(const Snapshot& s);
// The share of blocks whose skipping raises the validation loss by less than `threshold` (a
// share of the loss): the blocks the trained model could drop. The effective depth is
// L · (1 − droppable share).
double droppable_share(const TrainedRecord& r, double threshold);
// The same over the deeper half of the blocks only (l > L/2).
double droppable_share_deep_half(const TrainedRecord& r, double threshold);

// The depths of the grid, the deep depths included, in increasing order.
std::vector<std::int64_t> grid_depths(const Settings& s);
// The learning rates the grid ran at this depth: --lrs at the grid's depths, --deep-lr at the
// deep depths.
std::vector<double> lrs_at(const Settings& s, std::int64_t depth);
// The grid's deepest trainable depth of one placement at one lr, for one seed: the largest
// grid depth d such that the run trains at d and at every smaller grid depth it ran at (0:
// not even at the smallest). At the deep depths the run of --deep-lr stands for every lr.
std::int64_t deepest_trainable(const Results& r, const Settings& s, const std::string& placement, double lr,
                               std::uint64_t seed);

// A learning-rate sweep: the runs of one stage at one depth and setup, at each of lrs (sorted).
struct LrSweep {
  std::string stage;
  std::int64_t depth = 0;
  std::vector<double> lrs;
  Setup setup;
};
// The lr stage's sweep (--lr-depth, --lr-sweep).
LrSweep lr_stage_sweep(const Settings& s);
// best_lr and best_lr_edge below, of any sweep.
double best_lr(const Results& r, const LrSweep& sweep, const std::string& placement, std::uint64_t seed);
int best_lr_edge(const Results& r, const LrSweep& sweep, const std::string& placement, std::uint64_t seed);

// ---------------------------------------------------------------- steps to a loss
// The first step at which the training loss, averaged over the tenth of the run before it (the
// window TrainResult::final_loss averages), is at or below target; NaN when it never is (or the
// run diverged). A run's own final loss is reached at its last step.
double steps_to_reach(const TrainResult& r, double target);
// The steps `scheme` needs to reach what `base` reached, as a share of base's steps: below 1,
// the scheme gets there sooner (0.8: 20% fewer steps, and tokens); when the scheme ends above
// base's final loss, base's steps over the steps base needed to reach the scheme's final loss
// (above 1). Both runs trained for the same steps with the same schedule. NaN when either
// diverged.
double relative_steps(const TrainResult& scheme, const TrainResult& base);

// The learning rate of the lowest validation loss among those of the lr stage for one
// placement and seed: the vertex of a parabola through the best point and its neighbours in
// log(lr) (the best point itself at the ends of the sweep); NaN when every run diverged.
double best_lr(const Results& r, const Settings& s, const std::string& placement, std::uint64_t seed);
// Where best_lr sits in the sweep: −1 at its lowest learning rate, +1 at its highest (the best
// is then only a bound: the loss may fall further beyond the sweep), 0 inside it or undefined.
int best_lr_edge(const Results& r, const Settings& s, const std::string& placement, std::uint64_t seed);

}  // namespace depth_study
