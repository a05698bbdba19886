// profiler.cpp — the hooks of profiler.hpp and the report.
#include "profiler.hpp"

#include <omp.h>

#include <algorithm>
#include <cstdio>
#include <vector>

namespace tapegrad::profiler {

namespace {
using Clock = std::chrono::steady_clock;

Profile* active = nullptr;
Clock::time_point last_event;     // end of the previous op or scope: start of the next forward op
double gemm_seconds_total = 0;    // GEMM time counted so far (monotonic)
double gemm_seconds_at_event = 0; // ... at last_event
int scope_depth = 0;              // forward ops inside a Scope are charged to the scope only

double seconds(Clock::time_point a, Clock::time_point b) { return std::chrono::duration<double>(b - a).count(); }

const char* phase_name(Phase p) { return p == Phase::forward ? "forward" : p == Phase::backward ? "backward" : "other"; }
}  // namespace

bool enabled() { return active != nullptr; }

ProfileGuard::ProfileGuard(Profile& profile) : previous_(active), start_(Clock::now()) {
  active = &profile;
  mark();
}

ProfileGuard::~ProfileGuard() {
  active->total_seconds += seconds(start_, Clock::now());
  active = previous_;
}

void mark() {
  last_event = Clock::now();
  gemm_seconds_at_event = gemm_seconds_total;
}

void forward_op_done(const char* name) {
  if (!active || scope_depth > 0) return;
  const Clock::time_point now = Clock::now();
  OpTime& t = active->ops[{name, Phase::forward}];
  t.calls += 1;
  t.seconds += seconds(last_event, now);
  t.gemm_seconds += gemm_seconds_total - gemm_seconds_at_event;
  last_event = now;
  gemm_seconds_at_event = gemm_seconds_total;
}

Scope::Scope(const char* name, Phase phase) : name_(name), phase_(phase), active_(active != nullptr) {
  if (!active_) return;
  ++scope_depth;
  start_ = Clock::now();
  gemm_start_ = gemm_seconds_total;
}

Scope::~Scope() {
  if (!active_ || !active) return;
  --scope_depth;
  OpTime& t = active->ops[{name_, phase_}];
  t.calls += 1;
  t.seconds += seconds(start_, Clock::now());
  t.gemm_seconds += gemm_seconds_total - gemm_start_;
  mark();
}

GemmTimer::GemmTimer() : active_(active != nullptr && omp_get_thread_num() == 0) {
  if (active_) start_ = Clock::now();
}

GemmTimer::~GemmTimer() {
  if (active_) gemm_seconds_total += seconds(start_, Clock::now());
}

std::string Profile::report(std::int64_t steps) const {
  const double per_step = 1000.0 / static_cast<double>(std::max<std::int64_t>(steps, 1));
  std::vector<std::pair<std::pair<std::string, Phase>, OpTime>> rows(ops.begin(), ops.end());
  std::sort(rows.begin(), rows.end(), [](const auto& a, const auto& b) { return a.second.seconds > b.second.seconds; });
  std::string out;
  char line[256];
  std::snprintf(line, sizeof line, "%-28s %-8s %9s %10s %7s %7s\n", "op", "phase", "calls/step", "ms/step", "share", "GEMM");
  out += line;
  double phase_total[3] = {0, 0, 0}, phase_gemm[3] = {0, 0, 0}, counted = 0;
  for (const auto& [key, t] : rows) {
    const double share = total_seconds > 0 ? 100 * t.seconds / total_seconds : 0;
    const double gemm = t.seconds > 0 ? 100 * t.gemm_seconds / t.seconds : 0;
    std::snprintf(line, sizeof line, "%-28s %-8s %9.1f %10.3f %6.1f%% %6.0f%%\n", key.first.c_str(), phase_name(key.second),
                  static_cast<double>(t.calls) / static_cast<double>(std::max<std::int64_t>(steps, 1)), t.seconds * per_step,
                  share, gemm);
    out += line;
    phase_total[static_cast<int>(key.second)] += t.seconds;
    phase_gemm[static_cast<int>(key.second)] += t.gemm_seconds;
    counted += t.seconds;
  }
  for (int p = 0; p < 3; ++p) {
    std::snprintf(line, sizeof line, "total %-22s %-8s %9s %10.3f %6.1f%% %6.0f%%\n", "", phase_name(static_cast<Phase>(p)), "",
                  phase_total[p] * per_step, total_seconds > 0 ? 100 * phase_total[p] / total_seconds : 0,
                  phase_total[p] > 0 ? 100 * phase_gemm[p] / phase_total[p] : 0);
    out += line;
  }
  std::snprintf(line, sizeof line, "not in any op (between steps, after backward): %.3f ms/step; whole: %.3f ms/step\n",
                (total_seconds - counted) * per_step, total_seconds * per_step);
  out += line;
  return out;
}

}  // namespace tapegrad::profiler
