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

// ---------------------------------------------------------------- intervals

double t_quantile_975(std::size_t dof) {
  // Student's t, 97.5th percentile, dof 1..30 (any statistics table).
  static const double table[] = {12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228,
                                 2.201,  2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086,
                                 2.080,  2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042};
  if (dof == 0) return NAN;
  if (dof <= 30) return table[dof - 1];
  const double z = 1.959964, v = static_cast<double>(dof);
  const double z3 = z * z * z, z5 = z3 * z * z;
  return z + (z3 + z) / (4 * v) + (5 * z5 + 16 * z3 + 3 * z) / (96 * v * v);
}

Interval t_interval(const std::vector<double>& v) {
  const Stat s = stat_of(v);
  Interval i{s.mean, NAN, NAN, s.n, "t", false};
  if (s.n < 2) return i;
  const double half = t_quantile_975(s.n - 1) * s.sd / std::sqrt(static_cast<double>(s.n));
  i.low = s.mean - half, i.high = s.mean + half;
  return i;
}

Interval paired_t_interval(const std::vector<double>& a, const std::vector<double>& b) {
  std::vector<double> d;
  for (std::size_t k = 0; k < std::min(a.size(), b.size()); ++k)
    if (std::isfinite(a[k]) && std::isfinite(b[k])) d.push_back(a[k] - b[k]);
  Interval i = t_interval(d);
  i.method = "paired t";
  return i;
}

Interval welch_t_interval(const std::vector<double>& a, const std::vector<double>& b) {
  const Stat sa = stat_of(a), sb = stat_of(b);
  Interval i{sa.mean - sb.mean, NAN, NAN, std::min(sa.n, sb.n), "Welch t", false};
  if (sa.n < 2 || sb.n < 2) return i;
  const double va = sa.sd * sa.sd / static_cast<double>(sa.n), vb = sb.sd * sb.sd / static_cast<double>(sb.n);
  const double se = std::sqrt(va + vb);
  // ν by Welch–Satterthwaite; both spreads 0 gives 0/0: the interval is then the point itself.
  const double nu = (va + vb) * (va + vb) / (va * va / static_cast<double>(sa.n - 1) + vb * vb / static_cast<double>(sb.n - 1));
  const std::size_t dof = std::isfinite(nu) ? std::max<std::size_t>(1, static_cast<std::size_t>(nu)) : sa.n + sb.n - 2;
  i.low = i.estimate - t_quantile_975(dof) * se, i.high = i.estimate + t_quantile_975(dof) * se;
  return i;
}

Interval paired_log_ratio_interval(const std::vector<double>& a, const std::vector<double>& b) {
  std::vector<double> la, lb;
  for (std::size_t k = 0; k < std::min(a.size(), b.size()); ++k) {
    const bool ok = a[k] > 0 && b[k] > 0;  // false for NaN too
    la.push_back(ok ? std::log(a[k]) : NAN), lb.push_back(ok ? std::log(b[k]) : NAN);
  }
  Interval i = paired_t_interval(la, lb);
  i.estimate = std::exp(i.estimate), i.low = std::exp(i.low), i.high = std::exp(i.high);
  i.method = "paired t on log", i.log_scale = true;
  return i;
}

Interval wilson_interval(std::size_t k, std::size_t n) {
  Interval i{NAN, NAN, NAN, n, "Wilson", false};
  if (n == 0) return i;
  const double z = 1.959964, nn = static_cast<double>(n), p = static_cast<double>(k) / nn;
  const double centre = (p + z * z / (2 * nn)) / (1 + z * z / nn);
  const double half = z * std::sqrt(p * (1 - p) / nn + z * z / (4 * nn * nn)) / (1 + z * z / nn);
  i.estimate = p, i.low = std::max(0.0, centre - half), i.high = std::min(1.0, centre + half);
  return i;
}

std::string fmt_interval(const Interval& i, int significant) {
  if (i.n == 0) return "– (" + i.method + ", no " + std::string(i.method == "Wilson" ? "runs" : "seeds") + ")";
  const std::string unit = i.method == "Wilson" ? " run" : " seed";
  const std::string count = std::to_string(i.n) + unit + (i.n == 1 ? "" : "s");
  if (!std::isfinite(i.low)) return study::fmt(i.estimate, significant) + " (" + i.method + ", " + count + ": no interval)";
  return study::fmt(i.estimate, significant) + " [" + study::fmt(i.low, significant) + ", " + study::fmt(i.high, significant) +
         "] (" + i.method + ", " + count + ")";
}

Call judge(const Interval& i, double null_value, double margin) {
  if (i.n < 2 || !std::isfinite(i.low) || !std::isfinite(i.high)) return Call::too_few;
  if (i.low > null_value) return Call::supported;
  if (i.high < null_value) return Call::not_supported;
  const double lo = i.log_scale ? null_value / (1 + margin) : null_value - margin;
  const double hi = i.log_scale ? null_value * (1 + margin) : null_value + margin;
  if (i.low > lo && i.high < hi) return Call::not_supported;  // equivalent: any effect is smaller than the margin
  return Call::inconclusive;
}

std::size_t seeds_needed(const Interval& i, double null_value) {
  const auto to_scale = [&](double x) { return i.log_scale ? std::log(x) : x; };
  const double effect = std::abs(to_scale(i.estimate) - to_scale(null_value));
  const double half = (to_scale(i.high) - to_scale(i.low)) / 2;
  if (!(effect > 0) || !std::isfinite(half)) return 0;
  const double ratio = half / effect;
  return static_cast<std::size_t>(std::ceil(static_cast<double>(i.n) * ratio * ratio));
}

// ---------------------------------------------------------------- the norm-gradient printout

TraceEnds trace_ends(const std::vector<double>& trace, std::int64_t warmup) {
  TraceEnds e;
  if (trace.empty()) return e;
  for (double g : trace) e.non_finite = e.non_finite || !std::isfinite(g);
  if (e.non_finite) return e;
  std::size_t skip = static_cast<std::size_t>(std::max<std::int64_t>(0, warmup));
  if (skip + 2 > trace.size()) skip = 0;  // stopped inside the warm-up: read all of it
  const std::vector<double> part(trace.begin() + static_cast<std::ptrdiff_t>(skip), trace.end());
  const std::size_t tenth = std::max<std::size_t>(1, part.size() / 10);
  e.first = study::mean(std::vector<double>(part.begin(), part.begin() + static_cast<std::ptrdiff_t>(tenth)));
  e.last = study::mean_of_last(part, tenth);
  e.peak = *std::max_element(part.begin(), part.end());
  return e;
}

std::string norm_grad_trend(const std::vector<double>& trace, std::int64_t warmup) {
  if (trace.empty()) return "";
  const TraceEnds e = trace_ends(trace, warmup);
  if (e.non_finite) return "exploding";
  // No gradient at the start: it vanishes if none comes later either; one that appears is the
  // model starting to use its norms, not an explosion.
  if (e.first == 0) return e.last == 0 ? "vanishing" : "steady";
  if (e.peak > 100 * e.first) return "exploding";
  if (e.last < 0.01 * e.first) return "vanishing";
  return "steady";
}

// ---------------------------------------------------------------- the runs

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

namespace {
// One placement and seed's lr sweep: log(lr) and the validation loss (∞ where it diverged),
// and the index of the lowest loss (npos when there is no finite one).
struct Sweep {
  std::vector<double> lrs, losses;
  std::size_t best = std::string::npos;
};

Sweep sweep_of(const Results& r, const LrSweep& sweep, const std::string& placement, std::uint64_t seed) {
  Sweep w;
  for (double lr : sweep.lrs)
    for (auto* t : runs_of(r, sweep.stage, placement, sweep.depth, lr, sweep.setup))
      if (t->seed == seed) {
        w.lrs.push_back(std::log(lr));
        w.losses.push_back(t->outcome == "diverged" ? INFINITY : t->train.val_loss);
      }
  if (w.lrs.empty()) return w;
  const auto b = static_cast<std::size_t>(std::min_element(w.losses.begin(), w.losses.end()) - w.losses.begin());
  if (std::isfinite(w.losses[b])) w.best = b;
  return w;
}
}  // namespace

LrSweep lr_stage_sweep(const Settings& s) { return {"lr", s.lr_depth, s.lr_sweep, s.setup}; }

double best_lr(const Results& r, const Settings& s, const std::string& placement, std::uint64_t seed) {
  return best_lr(r, lr_stage_sweep(s), placement, seed);
}

int best_lr_edge(const Results& r, const Settings& s, const std::string& placement, std::uint64_t seed) {
  return best_lr_edge(r, lr_stage_sweep(s), placement, seed);
}

double best_lr(const Results& r, const LrSweep& sweep, const std::string& placement, std::uint64_t seed) {
  const Sweep w = sweep_of(r, sweep, placement, seed);
  if (w.best == std::string::npos) return NAN;
  const std::size_t b = w.best;
  const auto& lrs = w.lrs;
  const auto& losses = w.losses;
  if (b == 0 || b + 1 == lrs.size() || !std::isfinite(losses[b - 1]) || !std::isfinite(losses[b + 1]))
    return std::exp(lrs[b]);
  // The vertex of the parabola through (x0, y0), (x1, y1), (x2, y2).
  const double x0 = lrs[b - 1], x1 = lrs[b], x2 = lrs[b + 1], y0 = losses[b - 1], y1 = losses[b], y2 = losses[b + 1];
  const double num = (x1 - x0) * (x1 - x0) * (y1 - y2) - (x1 - x2) * (x1 - x2) * (y1 - y0);
  const double den = (x1 - x0) * (y1 - y2) - (x1 - x2) * (y1 - y0);
  if (den == 0) return std::exp(x1);
  return std::exp(std::clamp(x1 - 0.5 * num / den, x0, x2));
}

int best_lr_edge(const Results& r, const LrSweep& sweep, const std::string& placement, std::uint64_t seed) {
  const Sweep w = sweep_of(r, sweep, placement, seed);
  if (w.best == std::string::npos || w.lrs.size() < 2) return 0;
  // the sweep's lowest and highest lr (the sweep's lrs need not be sorted)
  const auto [lo, hi] = std::minmax_element(w.lrs.begin(), w.lrs.end());
  if (w.lrs[w.best] == *lo) return -1;
  if (w.lrs[w.best] == *hi) return 1;
  return 0;
}

// ---------------------------------------------------------------- steps to a loss

double steps_to_reach(const TrainResult& r, double target) {
  if (r.status == "non-finite" || r.loss.empty() || !std::isfinite(target)) return NAN;
  // the window's mean as final_loss takes it (study::mean_of_last), so that a run reaches its
  // own final loss at its last step exactly
  const std::size_t window = std::max<std::size_t>(1, r.loss.size() / 10);
  for (std::size_t end = window; end <= r.loss.size(); ++end)
    if (study::mean_of_last(std::vector<double>(r.loss.begin(), r.loss.begin() + static_cast<std::ptrdiff_t>(end)), window) <= target)
      return static_cast<double>(std::min<std::int64_t>(r.steps_done, static_cast<std::int64_t>(end) * r.trace_stride));
  return NAN;
}

double relative_steps(const TrainResult& scheme, const TrainResult& base) {
  if (!std::isfinite(scheme.final_loss) || !std::isfinite(base.final_loss)) return NAN;
  const double n = static_cast<double>(base.steps_done);
  if (scheme.final_loss <= base.final_loss) return steps_to_reach(scheme, base.final_loss) / n;
  return n / steps_to_reach(base, scheme.final_loss);
}

}  // namespace depth_study
