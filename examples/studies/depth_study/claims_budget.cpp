// claims_budget.cpp — how each claim's figure moves with the budget of steps: the budget
// stage's runs (settings.hpp: the grid's runs of --budget-placements and the lr stage's runs
// again at --budget-fractions of --steps) read as the grid and lr stages of a shorter study,
// beside the study itself. Three figures carry the claims that turn on the budget:
//
//   droppable share   of the blocks at --skip-depth (claims 5 and 9)
//   best lr           of the lr sweep (claim 6)
//   deepest depth     that trains, over --depths (claims 1, 3, 7)
//
// A figure has stopped moving when the paired interval (over seeds) of its change from the
// second-largest budget to the largest lies inside a band that does not matter; it still
// moves when the interval leaves out no change (0 for a difference, 1 for a ratio).
#include "claims_budget.hpp"

#include <cmath>

#include "claims_writer.hpp"

namespace depth_study {

namespace {

// The runs of one budget seen as the grid and lr stages of a study of that many steps. The
// deep depths are left out at every budget (the budget stage does not run them), so that the
// deepest depth means the same at each.
struct View {
  Settings s;
  Results r;
};

View view_at(const Settings& s, const Results& r, std::int64_t steps) {
  View v{s, {}};
  v.s.deep_depths.clear();
  if (steps == s.train.steps) {
    v.r.trained = r.trained;
    return v;
  }
  v.s.train.steps = steps;
  v.s.setup.warmup = std::llround(static_cast<double>(s.setup.warmup) * static_cast<double>(steps) /
                                  static_cast<double>(s.train.steps));
  v.s.placements = s.budget_placements;
  if (!s.budget_lr) v.s.lr_placements.clear();
  for (const TrainedRecord& t : r.trained) {
    if (t.stage != "budget" || t.steps != steps) continue;
    const std::string& p = t.variant->name;
    if (has(s.budget_placements, p) && has(s.depths, t.depth) && std::find(s.lrs.begin(), s.lrs.end(), t.lr) != s.lrs.end()) {
      v.r.trained.push_back(t);
      v.r.trained.back().stage = "grid";
    }
    if (s.budget_lr && has(s.lr_placements, p) && t.depth == s.lr_depth &&
        std::find(s.lr_sweep.begin(), s.lr_sweep.end(), t.lr) != s.lr_sweep.end()) {
      v.r.trained.push_back(t);
      v.r.trained.back().stage = "lr";
    }
  }
  return v;
}

// One figure per seed (NaN where it was not measured).
using Figure = std::function<double(const View&, const std::string& placement, std::uint64_t seed)>;

double droppable_at_skip_depth(const View& v, const std::string& p, std::uint64_t seed) {
  for (auto* t : runs_of(v.r, "grid", p, v.s.skip_depth, v.s.lrs.front(), v.s.setup))
    if (t->seed == seed && t->measured_after) return droppable_share(*t, v.s.skip_threshold);
  return NAN;
}
double best_lr_of(const View& v, const std::string& p, std::uint64_t seed) { return best_lr(v.r, v.s, p, seed); }
double deepest_of(const View& v, const std::string& p, std::uint64_t seed) {
  // Only where the placement ran at the smallest depth (else "0" would mean "not run").
  if (runs_of(v.r, "grid", p, v.s.depths.front(), v.s.lrs.front(), v.s.setup).empty()) return NAN;
  return static_cast<double>(deepest_trainable(v.r, v.s, p, v.s.lrs.front(), seed));
}

std::vector<double> per_seed(const View& v, const Figure& f, const std::string& p) {
  std::vector<double> out;
  for (auto seed : v.s.seeds) out.push_back(f(v, p, seed));
  return out;
}

struct FigureSpec {
  std::string name, file, y_label, caption;
  Figure figure;
  std::vector<std::string> placements;
  bool ratio = false;       // judge the change as a ratio (the learning rate), else a difference
  double margin = 0;        // a change inside this band does not matter
  bool depth_axis = false;  // the deepest depth: drawn on a categorical axis
};

}  // namespace

void budget_section(Writer& w) {
  const Settings& s = w.s;
  if (s.budget_fractions.empty()) return;
  std::vector<std::int64_t> budgets;
  for (double f : s.budget_fractions) budgets.push_back(budget_steps(s, f));
  budgets.push_back(s.train.steps);
  std::sort(budgets.begin(), budgets.end());
  budgets.erase(std::unique(budgets.begin(), budgets.end()), budgets.end());
  std::vector<View> views;
  for (auto steps : budgets) views.push_back(view_at(s, w.r, steps));

  w.doc().heading("How the figures move with the budget");
  w.doc().paragraph("The claims that turn on how long the models train rest on three figures. The budget stage ran the grid's " +
                    study::join(s.budget_placements) + " runs (lr " + study::comma_list(s.lrs) + ")" +
                    (s.budget_lr ? " and the lr stage's runs" : "") + " again at " + study::comma_list(s.budget_fractions) +
                    " of the " + std::to_string(s.train.steps) + " steps, each with its warm-up shortened alike. A figure has "
                    "**stopped moving** when the 95% interval of its change from " + std::to_string(budgets[budgets.size() - 2]) +
                    " to " + std::to_string(budgets.back()) + " steps (paired by seed) lies inside a band too small to change a "
                    "verdict; it **still moves** when the interval leaves out no change; otherwise the seeds cannot tell.");

  std::vector<std::string> depth_names;
  for (auto d : s.depths) depth_names.push_back(std::to_string(d));
  const std::vector<FigureSpec> specs = {
      {"droppable share at " + std::to_string(s.skip_depth) + " blocks", "budget_droppable.svg", "droppable share",
       "Each line is a placement's share of blocks that can be skipped for a loss rise under " + fmt(100 * s.skip_threshold) +
           "%, against the steps it trained. A line that is still falling at the right end has not settled: layer collapse "
           "(claim 5) and the deep layers' use (claim 9) would read differently with more steps.",
       droppable_at_skip_depth, s.budget_placements, false, 0.1, false},
      {"best learning rate at " + std::to_string(s.lr_depth) + " blocks", "budget_best_lr.svg", "best learning rate (log scale)",
       "The best learning rate of each placement (the vertex of the parabola through the sweep's lowest validation loss), "
       "against the steps. Claim 6 compares Pre-LN's to Post-LN's: where both lines run level, the ratio no longer turns on "
       "the budget.",
       best_lr_of, s.budget_lr ? s.lr_placements : std::vector<std::string>{}, true, 0.25, false},
      {"deepest trainable depth", "budget_deepest.svg", "deepest depth that trains",
       "The median over seeds of the deepest of the depths " + study::join(depth_names) + " at which a placement trains (and at "
       "every smaller one), against the steps; the bar spans the seeds, the bottom row holds placements that train at none. "
       "A line that climbs to the right end is a depth limit set by the budget, not by the placement.",
       deepest_of, s.budget_placements, false, 0.5, true},
  };

  study::Table moves({"figure", "placement", "by steps: mean ± spread over seeds", "change over the last doubling", "reading"});
  std::vector<std::string> still;
  for (const FigureSpec& spec : specs) {
    if (spec.placements.empty()) continue;
    study::LineChart c("The " + spec.name + " against the training steps", "training steps (log scale)", spec.y_label);
    c.log_x = true;
    c.log_y = spec.ratio;
    c.caption = spec.caption;
    if (spec.depth_axis) depth_ticks(c, s.depths);
    for (const std::string& p : spec.placements) {
      study::Series se;
      se.name = label(p);
      se.markers = true;
      std::vector<std::string> cells;
      for (std::size_t b = 0; b < views.size(); ++b) {
        std::vector<double> v = per_seed(views[b], spec.figure, p);
        const Stat st = stat_of(v);
        cells.push_back(std::to_string(budgets[b]) + ": " + fmt_stat(st));
        if (spec.depth_axis) {
          std::vector<double> rows;
          for (double d : v)
            if (std::isfinite(depth_row(s.depths, d))) rows.push_back(depth_row(s.depths, d));
          std::sort(rows.begin(), rows.end());
          se.x.push_back(static_cast<double>(budgets[b]));
          se.y.push_back(rows.empty() ? NAN : rows[rows.size() / 2]);
          se.y_low.push_back(rows.empty() ? NAN : rows.front());
          se.y_high.push_back(rows.empty() ? NAN : rows.back());
        } else {
          add_point(se, static_cast<double>(budgets[b]), st);
        }
      }
      c.series.push_back(se);
      // The change over the last doubling (or whatever the two largest budgets are).
      const auto before = per_seed(views[views.size() - 2], spec.figure, p), after = per_seed(views.back(), spec.figure, p);
      const Interval change = spec.ratio ? paired_log_ratio_interval(after, before) : paired_t_interval(after, before);
      // No change is 0 for a difference and 1 for a ratio; the band is ±margin, or a factor 1 + margin.
      const double none = spec.ratio ? 1.0 : 0.0;
      const double band_low = spec.ratio ? 1 / (1 + spec.margin) : -spec.margin, band_high = spec.ratio ? 1 + spec.margin : spec.margin;
      std::string reading = "the seeds cannot tell";
      if (change.n < 2 || !std::isfinite(change.low)) reading = "too few seeds";
      else if (change.low > band_low && change.high < band_high) reading = "stopped moving";
      else if (change.low > none || change.high < none) reading = "still moves";
      if (reading == "still moves") still.push_back(label(p) + "'s " + spec.name);
      moves.add({spec.name, label(p), study::join(cells, "; "), fmt_interval(change), reading});
    }
    w.chart(c, spec.file);
  }
  w.doc().table(moves, "Each figure by the steps of training, and the paired interval of its change from " +
                           std::to_string(budgets[budgets.size() - 2]) + " to " + std::to_string(budgets.back()) +
                           " steps (a ratio for the learning rate). Bands that do not matter: 0.1 of the droppable share, "
                           "a factor 1.25 of the learning rate, half a depth step.");
  w.doc().paragraph(still.empty() ? "No figure still moves between the last two budgets: the verdicts below do not turn on the "
                                    "budget, within what the seeds can tell."
                                  : "Still moving at the largest budget: " + study::join(still, "; ") +
                                        ". The verdicts that rest on these describe this budget; --full trains ten times longer.");
}

}  // namespace depth_study
