// claims_writer.cpp — the tables, charts and side-by-side verdicts that several claims share.
#include "claims_writer.hpp"

#include <algorithm>
#include <cmath>

#include "common/study.hpp"

namespace depth_study {

std::string depth_list(const std::vector<std::int64_t>& d) { return study::comma_list(d); }

void depth_ticks(study::LineChart& c, const std::vector<std::int64_t>& depths) {
  c.y_ticks.push_back({0, "none"});
  for (std::size_t i = 0; i < depths.size(); ++i) c.y_ticks.push_back({static_cast<double>(i + 1), std::to_string(depths[i])});
}

double depth_row(const std::vector<std::int64_t>& depths, double depth) {
  if (!std::isfinite(depth)) return NAN;
  if (depth == 0) return 0.0;
  const auto at = std::find(depths.begin(), depths.end(), static_cast<std::int64_t>(depth));
  return at == depths.end() ? NAN : static_cast<double>(at - depths.begin() + 1);
}

// A table of a figure at initialization by placement (rows) and profile depth (columns).
study::Table profile_table(const Writer& w, const std::vector<std::string>& placements,
                           const std::function<Stat(const std::string&, std::int64_t)>& figure) {
  std::vector<std::string> cols = {"placement"};
  for (auto d : w.s.profile_depths) cols.push_back("L=" + std::to_string(d));
  study::Table t(cols);
  for (const auto& p : placements) {
    if (!has(w.s.profile_placements, p)) continue;
    std::vector<std::string> row = {label(p)};
    for (auto d : w.s.profile_depths) row.push_back(fmt_stat(figure(p, d), 2));
    t.add(row);
  }
  return t;
}

// A chart of a figure at initialization against depth (log-log), one series per placement.
study::LineChart profile_chart(const Writer& w, const std::string& title, const std::string& y,
                               const std::vector<std::string>& placements,
                               const std::function<Stat(const std::string&, std::int64_t)>& figure) {
  study::LineChart c(title, "depth L (blocks, log scale)", y);
  c.log_x = c.log_y = true;
  for (const auto& p : placements) {
    if (!has(w.s.profile_placements, p)) continue;
    study::Series se;
    se.name = label(p);
    se.markers = true;
    for (auto d : w.s.profile_depths) {
      add_point(se, static_cast<double>(d), figure(p, d));
    }
    c.series.push_back(se);
  }
  return c;
}

// The grid table: placement × depth, each cell the outcome over seeds at the best lr.
study::Table grid_table(const Writer& w, const std::vector<std::string>& placements) {
  std::vector<std::string> cols = {"placement"};
  const auto depths = grid_depths(w.s);
  for (auto d : depths) cols.push_back("L=" + std::to_string(d));
  study::Table t(cols);
  for (const auto& p : placements) {
    std::vector<std::string> row = {label(p)};
    for (auto d : depths) row.push_back(w.grid_cell(p, d));
    t.add(row);
  }
  return t;
}

Call interval_verdict(Writer& w, const std::string& what, const Interval& i, double null_value, double margin,
                      const std::string& band) {
  const Call c = judge(i, null_value, margin);
  const std::string fig = what + ": " + fmt_interval(i), null = fmt(null_value);
  switch (c) {
    case Call::supported: w.verdict(Verdict::supported, fig + ", wholly above " + null + ": the claimed direction."); break;
    case Call::not_supported:
      w.verdict(Verdict::not_supported, fig + (i.high < null_value ? ", wholly below " + null + ": the other direction."
                                                                   : ", inside the equivalence band " + band +
                                                                         ": no difference of a size that matters."));
      break;
    case Call::inconclusive: {
      const std::size_t n = seeds_needed(i, null_value);
      w.verdict(Verdict::not_measured,
                "inconclusive: " + fig + " holds " + null + " and reaches beyond " + band + "; " +
                    (n ? "about " + std::to_string(n) + " seeds would settle it if the effect stayed this size (--seeds)."
                       : "no effect at all shows, so no number of seeds would settle it."));
      break;
    }
    case Call::too_few: w.verdict(Verdict::not_measured, fig + ": fewer than 2 seeds measured both, so no interval (--seeds)."); break;
  }
  return c;
}

std::string unreached(const std::string& what, const std::string& option) {
  return what + " was not part of this run (" + option + ")";
}
// The inits measured at initialization for a placement: --init first, then --profile-inits.
static std::vector<std::string> profiled_inits(const Writer& w, const std::string& p) {
  std::vector<std::string> inits = {w.s.setup.init};
  if (has(w.s.profile_init_placements, p))
    for (const auto& i : w.s.profile_inits)
      if (!has(inits, i)) inits.push_back(i);
  return inits;
}

// The bottom-to-top gradient ratio of a placement at each profile depth under each init, side
// by side; and whether `holds` gives the same answer under every init (a "depends" verdict
// when not).
void ratio_by_init(Writer& w, const std::string& p, std::int64_t depth, const std::function<bool(double)>& holds,
                   const std::string& what) {
  std::vector<std::string> cols = {"init"};
  for (auto d : w.s.profile_depths) cols.push_back("L=" + std::to_string(d));
  study::Table t(cols);
  std::vector<std::string> yes, no;
  for (const auto& init : profiled_inits(w, p)) {
    std::vector<std::string> row = {init};
    for (auto d : w.s.profile_depths) row.push_back(fmt_stat(w.ratio(p, d, init), 2));
    t.add(row);
    const Stat r = w.ratio(p, depth, init);
    if (r.n) (holds(r.mean) ? yes : no).push_back(init + " (" + fmt(r.mean, 2) + ")");
  }
  if (t.rows().size() < 2) return;
  w.doc().table(t, label(p) + ": ‖∇ block 1‖ / ‖∇ block L‖ at initialization under each init");
  if (!yes.empty() && !no.empty())
    w.verdict(Verdict::depends, what + " at " + std::to_string(depth) + " layers under " + study::join(yes) + ", not under " +
                                    study::join(no) + ": it depends on the init.");
}

static std::vector<std::string> setup_outcomes(const Writer& w, const std::string& p, int& trains, int& fails) {
  std::vector<std::string> out;
  trains = fails = 0;
  for (const std::string& text : w.s.setups) {
    const Setup setup = Setup::parse(text);
    auto runs = runs_of(w.r, "setups", p, w.s.setup_depth, w.s.train.lr, setup);
    if (runs.empty()) continue;
    (mostly_trains(runs) ? trains : fails)++;
    out.push_back(setup.describe() + ": " + trains_count(runs) + " train, val " + fmt_stat(val_stat(runs)));
  }
  return out;
}

void depends_on_setup(Writer& w, const std::string& p) {
  int trains = 0, fails = 0;
  const auto rows = setup_outcomes(w, p, trains, fails);
  if (rows.empty()) return;
  w.doc().paragraph(label(p) + " at " + std::to_string(w.s.setup_depth) + " layers under each setup (lr " + fmt(w.s.train.lr) + "):");
  w.doc().bullets(rows);
  if (trains > 0 && fails > 0)
    w.verdict(Verdict::depends, label(p) + " at " + std::to_string(w.s.setup_depth) + " layers trains under " +
                                    std::to_string(trains) + " of the " + std::to_string(trains + fails) +
                                    " setups and not under the others (the init, the tied head or the warm-up; listed above).");
}


}  // namespace depth_study
