// claims_diagnostics.cpp — claim 11, the seed article's training diagnostic read literally: "if
// grad_norm → 0: vanishing gradient despite residuals → LR too low; if grad_norm → ∞: activate
// gradient clipping". It is tested as a forecast: every grid run's printout (the norm layers'
// gradient norm per step) is classified by summary.hpp's norm_grad_trend(), and the class is
// set against how the run ended. Not a test of the article's remedies (a higher lr, clipping).
#include "claims_writer.hpp"

#include <algorithm>
#include <array>
#include <cmath>

#include "common/study.hpp"

namespace depth_study {

namespace {

const std::array<const char*, 3> kOutcomes = {"trains", "plateau", "diverged"};
const std::array<const char*, 3> kClasses = {"vanishing", "exploding", "steady"};

// How a rule's flags (vanishing or exploding) line up with failure (plateau or diverged) over
// a set of runs: the two shares a forecaster is judged on, each with its Wilson interval.
struct Forecast {
  std::size_t runs = 0, failing = 0, flagged = 0, hits = 0;  // hits: flagged and failing
  Interval caught() const { return wilson_interval(hits, failing); }  // failing runs flagged
  Interval right() const { return wilson_interval(hits, flagged); }   // flagged runs that fail
  void add(const std::string& cls, const std::string& outcome) {
    if (cls.empty()) return;  // no trace: nothing printed to read
    const bool flag = cls != "steady", fail = outcome != "trains";
    ++runs, failing += fail, flagged += flag, hits += flag && fail;
  }
};

// "8/10 = 0.8 [0.49, 0.94] (Wilson, 10 runs)"; "0/0 (none)" when there is nothing to share.
std::string share(const Interval& i, std::size_t k) {
  if (i.n == 0) return "0/0 (none)";
  return std::to_string(k) + "/" + std::to_string(i.n) + " = " + fmt_interval(i, 2);
}

// "0.52 (0.11–0.93)"
std::string median_range(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return fmt(v[v.size() / 2], 2) + " (" + fmt(v.front(), 2) + "–" + fmt(v.back(), 2) + ")";
}

}  // namespace

void claim_11(Writer& w) {
  const Settings& s = w.s;
  w.section(11, "the norm layers' gradient norm foretells a failing run",
            "The seed article's diagnostic: print the gradient norm of the normalization layers during training; "
            "\"if grad_norm → 0: vanishing gradient despite residuals → LR too low; if grad_norm → ∞: activate "
            "gradient clipping\". Read as a test: the printout flags the runs that fail.",
            "Every grid run (each placement, depth, lr and seed): ‖∇‖ over every γ and β of the norm layers at each step, "
            "before clipping (the training clips the whole gradient at " + fmt(s.train.clip) + " after it). The trace after "
            "the " + std::to_string(s.setup.warmup) + " warm-up steps (the lr ramp moves it by design) is read by a fixed "
            "rule, with first and last the means of its first and last tenth: **exploding** (→ ∞) when a printed value is "
            "non-finite or exceeds 100 × first; **vanishing** (→ 0) when last < 0.01 × first (two orders of magnitude "
            "down); **steady** otherwise. A run fails when it did not train (plateau or diverged, as in the setup).");
  Forecast norms, all;  // the norm layers' printout, and the same rule on ‖∇‖ over every parameter
  std::size_t table[3][3] = {}, late = 0, no_trace = 0;
  for (const TrainedRecord& t : w.r.trained) {
    if (t.stage != "grid") continue;
    const std::string cls = norm_grad_trend(t.train.norm_grad_norm, static_cast<std::int64_t>(t.train.trace_index(t.setup.warmup)));
    norms.add(cls, t.outcome);
    all.add(norm_grad_trend(t.train.grad_norm, static_cast<std::int64_t>(t.train.trace_index(t.setup.warmup))), t.outcome);
    if (cls.empty()) {
      ++no_trace;
      continue;
    }
    for (std::size_t c = 0; c < kClasses.size(); ++c)
      for (std::size_t o = 0; o < kOutcomes.size(); ++o) table[c][o] += cls == kClasses[c] && t.outcome == kOutcomes[o];
    // A non-finite printed value comes at the step the run fails: too late to act on.
    bool non_finite = false;
    for (double g : t.train.norm_grad_norm) non_finite = non_finite || !std::isfinite(g);
    late += non_finite;
  }
  study::Table cross({"norm-gradient trend", "trains", "plateau", "diverged", "runs"});
  for (std::size_t c = 0; c < kClasses.size(); ++c)
    cross.add({kClasses[c], std::to_string(table[c][0]), std::to_string(table[c][1]), std::to_string(table[c][2]),
               std::to_string(table[c][0] + table[c][1] + table[c][2])});
  w.doc().table(cross, "Every grid run with a trace, by the trend of its norm-gradient printout and by how it ended" +
                           (no_trace ? "; " + std::to_string(no_trace) + " run(s) had no step to print" : std::string()));
  // How far the runs are from the rule's thresholds, by outcome: the median of last/first (the
  // rule flags < 0.01) and of peak/first (it flags > 100), with their range over the runs.
  study::Table ends({"outcome", "runs", "last / first: median (range)", "peak / first: median (range)"});
  for (const char* outcome : kOutcomes) {
    std::vector<double> fall, rise;
    for (const TrainedRecord& t : w.r.trained) {
      if (t.stage != "grid" || t.outcome != outcome) continue;
      const TraceEnds e = trace_ends(t.train.norm_grad_norm, static_cast<std::int64_t>(t.train.trace_index(t.setup.warmup)));
      if (e.first > 0) fall.push_back(e.last / e.first), rise.push_back(e.peak / e.first);
    }
    if (fall.empty()) continue;
    ends.add({outcome, std::to_string(fall.size()), median_range(fall), median_range(rise)});
  }
  if (!ends.rows().empty())
    w.doc().table(ends, "The norm-gradient trace after the warm-up, in units of its first tenth (finite traces only)");
  study::Table shares({"printout read", "failing runs it flags (95% Wilson)", "flagged runs that fail (95% Wilson)"});
  shares.add({"norm layers' γ, β", share(norms.caught(), norms.hits), share(norms.right(), norms.hits)});
  shares.add({"every parameter (for comparison)", share(all.caught(), all.hits), share(all.right(), all.hits)});
  w.doc().table(shares, "A flag is vanishing or exploding; a failure is plateau or diverged. " + std::to_string(late) +
                            " exploding flag(s) came from a non-finite value, printed at the step the run failed.");
  // The verdict: the flag foretells failure when both shares are at least 0.8 and both 95%
  // lower bounds at least 0.5 (most failures caught, most alarms real, and not by luck of a
  // few runs). Both shares ≥ 0.8 with a lower bound under 0.5: too few runs, inconclusive.
  const Interval caught = norms.caught(), right = norms.right();
  const std::string fig = "the printout flags " + share(caught, norms.hits) + " of the failing grid runs; " +
                          share(right, norms.hits) + " of its flags are failing runs";
  if (norms.runs == 0) w.verdict(Verdict::not_measured, "no grid run printed a norm-layer gradient (--placements, --depths).");
  else if (norms.failing == 0)
    w.verdict(Verdict::not_measured, "every grid run trained, so there is no failure to foretell; the printout flagged " +
                                         std::to_string(norms.flagged) + " of the " + std::to_string(norms.runs) + " runs.");
  else if (norms.flagged > 0 && caught.estimate >= 0.8 && right.estimate >= 0.8)
    w.verdict(caught.low >= 0.5 && right.low >= 0.5 ? Verdict::supported : Verdict::not_measured,
              (caught.low >= 0.5 && right.low >= 0.5 ? "" : "inconclusive: ") + fig +
                  " (supported needs both ≥ 0.8 with 95% lower bounds ≥ 0.5" +
                  (caught.low >= 0.5 && right.low >= 0.5 ? ")." : "; more runs, --seeds, narrow the bounds)."));
  else
    w.verdict(Verdict::not_supported, fig + " (supported needs both ≥ 0.8 with 95% lower bounds ≥ 0.5).");
}

}  // namespace depth_study
