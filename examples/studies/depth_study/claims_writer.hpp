// claims_writer.hpp — what the claims' sections share (claims_*.cpp): the Writer, which adds
// to the report and records each verdict, the lookups of a configuration's runs, and the
// tables and charts more than one claim draws. Internal to the depth study's report.
#pragma once

#include <algorithm>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "claims.hpp"
#include "summary.hpp"

namespace depth_study {

using study::fmt;
using study::Verdict;

inline std::string label(const std::string& placement) { return variant_from_name(placement).label; }
inline bool has(const std::vector<std::string>& v, const std::string& x) { return std::find(v.begin(), v.end(), x) != v.end(); }
inline bool has(const std::vector<std::int64_t>& v, std::int64_t x) { return std::find(v.begin(), v.end(), x) != v.end(); }


// The report as it is built: the document, its charts and the verdicts.
struct Writer {
  const Settings& s;
  const Results& r;
  Report& out;
  int claim = 0;

  study::Document& doc() { return out.document; }
  void chart(const study::LineChart& c, const std::string& file) {
    out.charts.emplace_back(file, c);
    doc().chart(c, file);
  }
  void verdict(Verdict v, const std::string& text) {
    out.verdicts.push_back({claim, v, text});
    doc().verdict(v, text);
  }
  void section(int number, const std::string& title, const std::string& claim_text, const std::string& setup) {
    claim = number;
    out.sections[number] = doc().heading("Claim " + std::to_string(number) + ": " + title);
    doc().paragraph("**The claim.** " + claim_text);
    doc().paragraph("**The setup.** " + setup);
  }

  // The grid's runs of a placement at a depth, at the lr where most seeds trained (ties: the
  // lower mean validation loss). Empty when the grid has no such run.
  std::pair<double, std::vector<const TrainedRecord*>> best_grid(const std::string& p, std::int64_t depth) const {
    std::pair<double, std::vector<const TrainedRecord*>> best{NAN, {}};
    for (double lr : lrs_at(s, depth)) {
      auto runs = runs_of(r, "grid", p, depth, lr, s.setup);
      if (runs.empty()) continue;
      const auto score = [](const std::vector<const TrainedRecord*>& v) {
        const Stat st = val_stat(v);
        return std::make_pair(count_outcome(v, "trains"), -(st.n ? st.mean : INFINITY));
      };
      if (best.second.empty() || score(runs) > score(best.second)) best = {lr, runs};
    }
    return best;
  }
  // "3/3 train, val 2.31 ± 0.04" of the best lr, or "–" when not run.
  std::string grid_cell(const std::string& p, std::int64_t depth) const {
    auto [lr, runs] = best_grid(p, depth);
    if (runs.empty()) return "–";
    std::string c = trains_count(runs) + " train";
    const std::size_t div = count_outcome(runs, "diverged");
    if (div) c += ", " + std::to_string(div) + " diverged";
    return c + ", val " + fmt_stat(val_stat(runs)) + " (lr " + fmt(lr, 2) + ")";
  }
  // Does the placement train at this depth (most seeds, at its best lr)? nullopt-like: -1 not run.
  int trains_at(const std::string& p, std::int64_t depth) const {
    auto runs = best_grid(p, depth).second;
    return runs.empty() ? -1 : mostly_trains(runs) ? 1 : 0;
  }
  // The ratio ‖∇ block 1‖/‖∇ block L‖ at init over seeds.
  Stat ratio(const std::string& p, std::int64_t depth, const std::string& init = "") const {
    std::vector<double> v;
    for (auto* q : profile_of(r, p, depth, init.empty() ? s.setup.init : init)) v.push_back(bottom_to_top_ratio(q->at_init));
    return stat_of(v);
  }
  Stat last_rms(const std::string& p, std::int64_t depth) const {
    std::vector<double> v;
    for (auto* q : profile_of(r, p, depth, s.setup.init)) v.push_back(q->at_init.rms.empty() ? NAN : q->at_init.rms.back());
    return stat_of(v);
  }
  // The trained runs at --skip-depth (grid, its best lr) with their after-training measurements.
  std::vector<const TrainedRecord*> measured(const std::string& p) const {
    std::vector<const TrainedRecord*> out;
    for (auto* t : best_grid(p, s.skip_depth).second)
      if (t->measured_after) out.push_back(t);
    return out;
  }
  Stat of_measured(const std::string& p, const std::function<double(const TrainedRecord&)>& f) const {
    std::vector<double> v;
    for (auto* t : measured(p)) v.push_back(f(*t));
    return stat_of(v);
  }
  // The stream stage's runs (claims 12–18) of a placement at a depth and lr, trained for
  // `steps` (0: --steps) with the warm-up of that budget (the default setup otherwise).
  std::vector<const TrainedRecord*> stream_runs(const std::string& p, std::int64_t depth, double lr, std::int64_t steps = 0,
                                                std::int64_t warmup = -1) const {
    Setup setup = s.setup;
    if (warmup >= 0) setup.warmup = warmup;
    std::vector<const TrainedRecord*> out;
    for (auto* t : runs_of(r, "stream", p, depth, lr, setup))
      if (t->steps == (steps > 0 ? steps : s.train.steps)) out.push_back(t);
    return out;
  }
  // f of each run, placed by its seed in the order of --seeds (NaN for a seed without a run):
  // two placements' vectors line up seed by seed, the form the paired intervals take.
  std::vector<double> by_seed(const std::vector<const TrainedRecord*>& runs,
                              const std::function<double(const TrainedRecord&)>& f) const {
    std::vector<double> v(s.seeds.size(), NAN);
    for (auto* t : runs)
      for (std::size_t k = 0; k < s.seeds.size(); ++k)
        if (s.seeds[k] == t->seed) v[k] = f(*t);
    return v;
  }
};

// The verdict on a claimed effect from its 95% interval (summary.hpp's judge(): null 0 for a
// difference, 1 for a ratio; margin the equivalence band, named in `band`, e.g. "±0.05"):
// supported or not supported as judge() calls it, saying why; "not measured" starting with
// "inconclusive", with the interval and the seeds that would settle it; "not measured" under 2
// seeds. `what` names the figure: "Pre-LN − Post-LN mean cosine". Returns the call.
Call interval_verdict(Writer& w, const std::string& what, const Interval& i, double null_value, double margin,
                      const std::string& band);

// "3,6,12"
std::string depth_list(const std::vector<std::int64_t>& d);
// The categorical depth axis of the deepest-trainable charts: a "none" row at 0 for a
// placement that trains at no depth (a log axis could not show it), then each of `depths`
// evenly spaced above it. depth_row gives a depth's place on it (NaN off the axis).
void depth_ticks(study::LineChart& c, const std::vector<std::int64_t>& depths);
double depth_row(const std::vector<std::int64_t>& depths, double depth);
// "<what> was not part of this run (<option>)": the text of a not-measured verdict.
std::string unreached(const std::string& what, const std::string& option);
// A figure at initialization by placement (rows) and profile depth (columns), and the same as
// a chart against depth on log-log axes.
study::Table profile_table(const Writer& w, const std::vector<std::string>& placements,
                           const std::function<Stat(const std::string&, std::int64_t)>& figure);
study::LineChart profile_chart(const Writer& w, const std::string& title, const std::string& y,
                               const std::vector<std::string>& placements,
                               const std::function<Stat(const std::string&, std::int64_t)>& figure);
// The grid: placement × depth, each cell the outcome over seeds at the best lr.
study::Table grid_table(const Writer& w, const std::vector<std::string>& placements);
// The bottom-to-top gradient ratio of a placement under each profiled init, side by side, and
// a "depends" verdict when `holds` answers differently under different inits.
void ratio_by_init(Writer& w, const std::string& p, std::int64_t depth, const std::function<bool(double)>& holds,
                   const std::string& what);
// The placement at --setup-depth under each setup, and a "depends" verdict when some setups
// train and others do not.
void depends_on_setup(Writer& w, const std::string& p);

// The claims' sections (claims.hpp lists them).
void claim_1(Writer& w);
void claim_2(Writer& w);
void claim_3(Writer& w);
void claim_4(Writer& w);
void claim_5(Writer& w);
void claim_6(Writer& w);
void claim_7(Writer& w);
void claim_8(Writer& w);
void claim_9(Writer& w);
void claim_10(Writer& w);
void claim_11(Writer& w);
void claim_12(Writer& w);  // claims_stream.cpp
void claim_13(Writer& w);
void claim_14(Writer& w);
void claim_15(Writer& w);  // claims_schemes.cpp
void claim_16(Writer& w);
void claim_17(Writer& w);
void claim_18(Writer& w);

}  // namespace depth_study
