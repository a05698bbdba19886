// faults.hpp — train_lm's fault injection, for the tests of docs/distributed.md ("Errors and
// faults end the whole job"). Hidden flags: --fail-on-rank R --fail-at-step S --fail-mode M
// make rank R, at step S (counted from 0, the updates done before it):
//   throw         throw an error at the start of the step (the default)
//   kill          SIGKILL itself inside the step's gradient allreduce: after backward, with
//                 the buckets it started in flight, while the other ranks wait for them
//   hang          stop answering at that same point: sleep forever, alive but silent
//   kill-in-save  SIGKILL itself kKillAfterBytes bytes into writing the checkpoint saved after
//                 S updates (only rank 0 writes one), the previous checkpoint in place
#pragma once

#include <signal.h>

#include <chrono>
#include <cstdio>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>

#include <tapegrad/io/file.hpp>

#include "options.hpp"

namespace lm {

inline constexpr std::int64_t kKillAfterBytes = 4096;

inline bool fault_due(const Settings& s, int rank, std::int64_t step, const char* mode) {
  return s.fail_on_rank == rank && s.fail_at_step == step && s.fail_mode == mode;
}

// At the start of step `step`: throws for "throw"; says whether "kill" or "hang" is due in
// this step's allreduce.
inline std::string fault_at_step_start(const Settings& s, int rank, std::int64_t step) {
  if (fault_due(s, rank, step, "throw"))
    throw std::runtime_error("failure injected at step " + std::to_string(step) + " (--fail-at-step)");
  if (fault_due(s, rank, step, "kill")) return "kill";
  if (fault_due(s, rank, step, "hang")) return "hang";
  return "";
}

// Inside the allreduce: the fault armed by fault_at_step_start, if any.
inline void fault_in_allreduce(const std::string& mode, int rank) {
  if (mode.empty()) return;
  std::fprintf(stderr, "train_lm: rank %d: %s inside the gradient allreduce (--fail-mode %s)\n", rank,
               mode == "kill" ? "killing itself" : "hanging", mode.c_str());
  std::fflush(stderr);
  if (mode == "kill") ::raise(SIGKILL);
  // Alive and silent. Sleeping survives the SIGTERM handler train_lm installs under mpirun,
  // so the job must end this rank with SIGKILL, as it would a truly stuck one.
  for (;;) std::this_thread::sleep_for(std::chrono::hours(1));
}

// Around the write of the checkpoint after `step` updates: the kill, when it is due.
inline std::unique_ptr<tapegrad::io::testing::FailWritesAfter> fault_in_save(const Settings& s, int rank,
                                                                              std::int64_t step) {
  if (!fault_due(s, rank, step, "kill-in-save")) return nullptr;
  return std::make_unique<tapegrad::io::testing::FailWritesAfter>(kKillAfterBytes,
                                                                   tapegrad::io::testing::WriteFault::kill);
}

}  // namespace lm
