// checkpoint_policy.hpp — when a training run saves its checkpoint: every `interval` steps,
// at its end, and when it is asked to stop. Ctrl-C (SIGINT), and SIGTERM when asked, are such a
// request, not a kill: the loop finishes its step, polls stop_requested(), saves and exits.
// A second Ctrl-C while the first is handled kills as usual. (Checkpoints are written
// atomically: a kill during the save leaves the previous one; training_checkpoint.hpp.)
#pragma once

#include <cstdint>

namespace tapegrad::training {

struct CheckpointPolicy {
  std::int64_t interval = 0;  // steps between checkpoints (0: only at the end)
  // Whether to save after step (1-based) of a run ending at last_step (which saves anyway).
  bool due(std::int64_t step, std::int64_t last_step) const { return interval > 0 && step % interval == 0 && step < last_step; }
};

// Installs the handlers (SIGTERM too when also_sigterm: what mpirun sends every rank on Ctrl-C).
void install_stop_handler(bool also_sigterm = false);
bool stop_requested();

}  // namespace tapegrad::training
