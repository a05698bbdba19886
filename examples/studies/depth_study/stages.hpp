// stages.hpp — the stages of a depth-study run (settings.hpp lists them) and what each one
// records. Every stage runs every configuration once per seed: seed s draws the model's
// initial weights (manual_seed(s)) and the order of the training batches (s ^ 0x5eed), so
// that runs with the same seed differ only in what the stage compares.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "runs.hpp"
#include "settings.hpp"
#include "torch_twin.hpp"

namespace depth_study {

class Ranks;  // ranks.hpp

// What the report says about the data and the machine.
struct SetupInfo {
  std::string command;   // the command that reruns the study, every setting spelled out
  std::string invoked;   // the command line as typed
  std::string data;      // "3 file(s), 123456 bytes: ..."
  std::string tokenizer;
  std::int64_t vocab_size = 0, train_tokens = 0, val_tokens = 0;
  // Cross-entropy of the train split's unigram model on the train split and on the
  // validation batches: what a model blind to the context reaches.
  double unigram_train = 0, unigram_validation = 0;
  int threads = 0;
  std::string load_start, load_end;
  double seconds = 0;
  // The plan's part of it (every run, in `processes` processes at once: --jobs on each of the
  // mpirun ranks), and how many of its runs were found recorded and not run again.
  double plan_seconds = 0;
  std::int64_t processes = 1;
  std::size_t runs = 0, resumed_runs = 0;
};

// profile: one placement, depth and seed at initialization.
struct ProfileRecord {
  std::string init;  // --init, or one of --profile-inits
  const Variant* variant = nullptr;
  std::int64_t depth = 0;
  std::uint64_t seed = 0;
  Snapshot at_init;
  double seconds = 0;    // building the model and measuring it
  std::size_t task = 0;  // its place in the plan: records are kept in this order
};

// grid, lr and setups: one trained run.
struct TrainedRecord {
  std::string stage;  // "grid", "lr", "setups" or "budget"
  const Variant* variant = nullptr;
  std::int64_t depth = 0;
  std::int64_t steps = 0;  // training steps (the budget stage varies them)
  double lr = 0;
  Setup setup;
  std::uint64_t seed = 0;
  TrainResult train;
  // "trains" (finite, and the final training loss at least --plateau-margin below the
  // plateau of its batches, TrainResult::plateau), "plateau" (finite, but not that far below)
  // or "diverged" (a NaN or Inf loss)
  std::string outcome;
  // grid runs at --skip-depth that trained: the snapshot after training (cosines of
  // consecutive layers) and the validation loss with each block skipped
  bool measured_after = false;
  Snapshot after;
  std::vector<double> skip_losses;
  // the stream stage's runs (claims 12–18): the stream's rms at every depth on
  // the probe batch, at init and after training, and the logit lens on the validation batches
  // after training ([l] for l = 0 (the embeddings) … L; runs.hpp's stream_rms, lens_losses)
  bool measured_stream = false;
  std::vector<double> stream_rms_init, stream_rms_after, lens;
  double measure_seconds = 0;  // building the model and the measurements after training
  std::size_t task = 0;
};

// translate: one encoder-decoder run of examples/translate.
struct TranslateRecord {
  std::string placement;
  std::int64_t layers = 0;
  std::uint64_t seed = 0;
  bool diverged = false;
  double val_loss = 0, exact_match = 0, token_accuracy = 0, seconds = 0;
  std::size_t task = 0;
};

struct Results {
  SetupInfo info;
  std::vector<ProfileRecord> profile;
  std::vector<TrainedRecord> trained;
  std::vector<TranslateRecord> translate;
  double translate_unigram = 0;  // the translation task's unigram baseline
  TorchOutcome torch;            // torch.skipped says why when it did not run
};

// Runs every stage of the settings (a stage with nothing to run is skipped) and returns what
// they measured; command reruns the study (it is printed first). Ctrl-C stops it with
// study::Interrupted.
//
// The runs are a plan of tasks, each with its key and its cost in block-steps (plan.hpp).
// Each run's records are saved in --out/records as it ends (records.hpp), so a study stopped
// for any reason resumes where it stopped. The runs not yet recorded are split over the
// mpirun ranks (ranks.hpp) and, on each, over --jobs worker processes of this same program
// (workers.hpp) with one thread each: the runs are small enough that one thread per process
// uses the cores better than two threads in one. Rank 0 gets every record back, in the plan's
// order, so the report does not depend on how the runs were spread. The other ranks and the
// workers return their share's records only.
Results run_stages(Settings& s, const std::string& command, const Ranks& ranks);

// What Ctrl-C prints: where the finished runs are, and how to resume.
std::string interrupted_message(const Settings& s);

// The steps of the budget stage's runs at this fraction of --steps.
std::int64_t budget_steps(const Settings& s, double fraction);

// The depth of the deeper Pre-LN model DenseFormer is set against (claim 17): 1.5 times
// --scheme-depth, the ratio of the paper's 72 blocks to 48.
std::int64_t denseformer_rival_depth(const Settings& s);

// The outcome of a training run, by the rule of TrainedRecord::outcome.
std::string outcome_of(const TrainResult& r, double margin);

}  // namespace depth_study
