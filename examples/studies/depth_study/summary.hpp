// summary.hpp — the sums the claims are judged on: a figure over seeds as mean ± spread, the
// runs of one configuration, the deepest depth that still trains, the best learning rate.
//
// Spread is the sample standard deviation over the seeds (0 for one seed): "2.31 ± 0.04 (3)".
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

// The learning rate of the lowest validation loss among those of the lr stage for one
// placement and seed: the vertex of a parabola through the best point and its neighbours in
// log(lr) (the best point itself at the ends of the sweep); NaN when every run diverged.
double best_lr(const Results& r, const Settings& s, const std::string& placement, std::uint64_t seed);

}  // namespace depth_study
