// summary.cpp — the sums of summary.hpp.
#include "summary.hpp"

#include <algorithm>
#include <set>

#include "common/report.hpp"

namespace depth_study {

void add_point(study::Series& series, double x, const Stat& s) {
  series.x.push_back(x);
  series.y.push_back(s.mean);
  series.y_low.push_back(s.mean - s.sd);
  series.y_high.push_back(s.mean + s.sd);
}

Stat stat_of(const std::vector<double>& v) {
  Stat s;
  double sum = 0;
  for (double x : v)
    if (std::isfinite(x)) sum += x, ++s.n;
  if (s.n == 0) return s;
  s.mean = sum / static_cast<double>(s.n);
  double sq = 0;
  for (double x : v)
    if (std::isfinite(x)) sq += (x - s.mean) * (x - s.mean);
  s.sd = s.n > 1 ? std::sqrt(sq / static_cast<double>(s.n - 1)) : 0.0;
  return s;
}

std::string fmt_stat(const Stat& s, int significant) {
  if (s.n == 0) return "–";
  if (s.n == 1) return study::fmt(s.mean, significant);
  return study::fmt(s.mean, significant) + " ± " + study::fmt(s.sd, 2);
}

std::vector<const TrainedRecord*> runs_of(const Results& r, const std::string& stage, const std::string& placement,
                                          std::int64_t depth, double lr, const Setup& setup) {
  std::vector<const TrainedRecord*> out;
  for (const TrainedRecord& t : r.trained)
    if (t.stage == stage && t.variant->name == placement && t.depth == depth && t.lr == lr && t.setup == setup)
      out.push_back(&t);
  return out;
}

std::size_t count_outcome(const std::vector<const TrainedRecord*>& runs, const std::string& outcome) {
  return static_cast<std::size_t>(std::count_if(runs.begin(), runs.end(), [&](auto* t) { return t->outcome == outcome; }));
}

std::string trains_count(const std::vector<const TrainedRecord*>& runs) {
  return std::to_string(count_outcome(runs, "trains")) + "/" + std::to_string(runs.size());
}

bool mostly_trains(const std::vector<const TrainedRecord*>& runs) {
  return !runs.empty() && 2 * count_outcome(runs, "trains") > runs.size();
}

Stat val_stat(const std::vector<const TrainedRecord*>& runs) {
  std::vector<double> v;
  for (auto* t : runs)
    if (t->outcome != "diverged") v.push_back(t->train.val_loss);
  return stat_of(v);
}

std::vector<const ProfileRecord*> profile_of(const Results& r, const std::string& placement, std::int64_t depth,
                                             const std::string& init) {
  std::vector<const ProfileRecord*> out;
  for (const ProfileRecord& p : r.profile)
    if (p.variant->name == placement && p.depth == depth && p.init == init) out.push_back(&p);
  return out;
}

double bottom_to_top_ratio(const Snapshot& s) { return s.grad_norm.empty() ? NAN : s.grad_norm.front() / s.grad_norm.back(); }

double mean_cosine(const Snapshot& s) { return study::mean(s.cosine); }

namespace {
double droppable(const TrainedRecord& r, double threshold, std::size_t first) {
  if (r.skip_losses.size() <= first) return NAN;
  std::size_t n = 0;
  for (std::size_t l = first; l < r.skip_losses.size(); ++l)
    n += r.skip_losses[l] < r.train.val_loss * (1 + threshold);
  return static_cast<double>(n) / static_cast<double>(r.skip_losses.size() - first);
}
}  // namespace

double droppable_share(const TrainedRecord& r, double threshold) { return droppable(r, threshold, 0); }
double droppable_share_deep_half(const TrainedRecord& r, double threshold) {
  return droppable(r, threshold, r.skip_losses.size() / 2);
}

std::vector<std::int64_t> grid_depths(const Settings& s) {
  std::set<std::int64_t> d(s.depths.begin(), s.depths.end());
  d.insert(s.deep_depths.begin(), s.deep_depths.end());
  return {d.begin(), d.end()};
}

std::vector<double> lrs_at(const Settings& s, std::int64_t depth) {
  std::vector<double> lrs;
  if (std::find(s.depths.begin(), s.depths.end(), depth) != s.depths.end()) lrs = s.lrs;
  if (std::find(s.deep_depths.begin(), s.deep_depths.end(), depth) != s.deep_depths.end() &&
      std::find(lrs.begin(), lrs.end(), s.deep_lr) == lrs.end())
    lrs.push_back(s.deep_lr);
  return lrs;
}

std::int64_t deepest_trainable(const Results& r, const Settings& s, const std::string& placement, double lr,
                               std::uint64_t seed) {
  std::int64_t deepest = 0;
  for (std::int64_t d : grid_depths(s)) {
    const std::vector<double> lrs = lrs_at(s, d);
    const double used = std::find(lrs.begin(), lrs.end(), lr) != lrs.end() ? lr : s.deep_lr;  // a deep depth
    const TrainedRecord* run = nullptr;
    for (auto* t : runs_of(r, "grid", placement, d, used, s.setup))
      if (t->seed == seed) run = t;
    if (!run) continue;  // not run at this depth (the deep depth, for most placements)
    if (run->outcome != "trains") break;
    deepest = d;
  }
  return deepest;
}

double best_lr(const Results& r, const Settings& s, const std::string& placement, std::uint64_t seed) {
  std::vector<double> lrs, losses;
  for (double lr : s.lr_sweep)
    for (auto* t : runs_of(r, "lr", placement, s.lr_depth, lr, s.setup))
      if (t->seed == seed) {
        lrs.push_back(std::log(lr));
        losses.push_back(t->outcome == "diverged" ? INFINITY : t->train.val_loss);
      }
  if (lrs.empty()) return NAN;
  const std::size_t b = static_cast<std::size_t>(std::min_element(losses.begin(), losses.end()) - losses.begin());
  if (!std::isfinite(losses[b])) return NAN;
  if (b == 0 || b + 1 == lrs.size() || !std::isfinite(losses[b - 1]) || !std::isfinite(losses[b + 1]))
    return std::exp(lrs[b]);
  // The vertex of the parabola through (x0, y0), (x1, y1), (x2, y2).
  const double x0 = lrs[b - 1], x1 = lrs[b], x2 = lrs[b + 1], y0 = losses[b - 1], y1 = losses[b], y2 = losses[b + 1];
  const double num = (x1 - x0) * (x1 - x0) * (y1 - y2) - (x1 - x2) * (x1 - x2) * (y1 - y0);
  const double den = (x1 - x0) * (y1 - y2) - (x1 - x2) * (y1 - y0);
  if (den == 0) return std::exp(x1);
  return std::exp(std::clamp(x1 - 0.5 * num / den, x0, x2));
}

}  // namespace depth_study
