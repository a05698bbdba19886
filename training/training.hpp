// training.hpp — all of training/: the pieces every training program needs, above nn, optim,
// io and data (docs/architecture.md). examples/train_lm and the studies are built from them.
//
//   schedule.hpp            learning-rate schedules by name; rebuilt from a saved state
//   update.hpp              one update: backward, health check, clip, step
//   evaluate.hpp            held-out loss of an LM; teacher-forced scores
//   progress.hpp            a progress line with an ETA; the clock
//   metrics_log.hpp         the metrics CSV that a resumed run continues byte for byte
//   step_file.hpp           a CSV of rows by step, cut back and continued on resume
//   checkpoint_policy.hpp   when to save; Ctrl-C and SIGTERM as a request to stop
//   training_checkpoint.hpp the whole state of a run in one file, resumable bit for bit
//   baseline.hpp            the unigram baseline
//   command_line.hpp        the command line that reruns a run
//   memory_estimate.hpp     the memory a run needs, from the model config (before building it)
//   memory_limit.hpp        the memory available; sizes such as "20GB"
//   mfu.hpp                 model-FLOPs utilization against the measured GEMM rate
#pragma once

#include "baseline.hpp"
#include "checkpoint_policy.hpp"
#include "command_line.hpp"
#include "evaluate.hpp"
#include "memory_estimate.hpp"
#include "memory_limit.hpp"
#include "metrics_log.hpp"
#include "mfu.hpp"
#include "progress.hpp"
#include "step_file.hpp"
#include "schedule.hpp"
#include "spike_guard.hpp"
#include "training_checkpoint.hpp"
#include "update.hpp"
