// profiler.hpp — where does a training step's time go? Time per op kind, forward and
// backward, and how much of it is spent in GEMM (BLAS).
//
//   profiler::Profile prof;
//   {
//     profiler::ProfileGuard guard(prof);    // on while the guard lives
//     for (int i = 0; i < 10; ++i) train_step();
//   }
//   std::cout << prof.report(/*steps=*/10);  // a table, most expensive first
//
// How it measures, cheaply and without touching each op:
// - backward: the engine times each node's backward function (and the gradient
//   accumulation after it) and charges it to the node's op name;
// - forward: an op records its node when it finishes, so the time since the previous op
//   finished is charged to it (work done between ops, e.g. a module's glue or an op run
//   under no_grad, is charged to the next recorded op);
// - optimizer steps time themselves (Scope), as does anything a user wraps in a Scope;
// - GEMM time is counted on the calling thread (OpenMP's thread 0 inside parallel loops), and
//   charged to the op or scope during which it ran.
// Profiling is for one training thread at a time; when no guard is active each hook costs one
// load of a null pointer.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <string>
#include <utility>

namespace tapegrad::profiler {

enum class Phase { forward, backward, other };

struct OpTime {
  std::int64_t calls = 0;
  double seconds = 0;       // wall time
  double gemm_seconds = 0;  // of which inside BLAS GEMM
};

class Profile {
 public:
  // (op name, phase) -> totals.
  std::map<std::pair<std::string, Phase>, OpTime> ops;
  double total_seconds = 0;  // wall time while the guard was active

  // One row per (op, phase), most expensive first: calls and ms per step, share of the total,
  // share of GEMM; then the totals per phase.
  std::string report(std::int64_t steps = 1) const;
  void clear() { ops.clear(), total_seconds = 0; }
};

// Turns profiling on for its lifetime, collecting into `profile` (which must outlive it).
class ProfileGuard {
 public:
  explicit ProfileGuard(Profile& profile);
  ~ProfileGuard();
  ProfileGuard(const ProfileGuard&) = delete;
  ProfileGuard& operator=(const ProfileGuard&) = delete;

 private:
  Profile* previous_;
  std::chrono::steady_clock::time_point start_;
};

bool enabled();

// Charges the time since the previous event to a forward op (called by record()).
void forward_op_done(const char* name);
// Restarts the forward clock (e.g. when backward ends) so that what follows is not charged
// to the next forward op.
void mark();

// Times a region (the optimizer step, a backward node, user code) and charges it to `name`.
class Scope {
 public:
  Scope(const char* name, Phase phase);
  ~Scope();
  Scope(const Scope&) = delete;
  Scope& operator=(const Scope&) = delete;

 private:
  const char* name_;
  Phase phase_;
  bool active_;
  std::chrono::steady_clock::time_point start_;
  double gemm_start_ = 0;
};

// GEMM accounting, called by blas::gemm.
class GemmTimer {
 public:
  GemmTimer();
  ~GemmTimer();

 private:
  bool active_;
  std::chrono::steady_clock::time_point start_;
};

}  // namespace tapegrad::profiler
