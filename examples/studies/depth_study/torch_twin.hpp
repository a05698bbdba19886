// torch_twin.hpp — a chosen subset of the depth study's runs again in PyTorch, on the same data
// and settings, so that a reader sees the measurement does not depend on the framework.
//
//   const TorchSetup setup = ...;                       // what to run, every setting spelled out
//   export_for_torch(dir, data, setup);                 // setup.json, tokens, batches -> dir
//   const TorchOutcome torch = run_torch(dir, "");      // python3 depth_study_torch.py dir
//   if (!torch.skipped.empty()) note(torch.skipped);    // no PyTorch here: say so, carry on
//
// The script (depth_study_torch.py, copied beside the executable at build time) rebuilds
// nn::TransformerLM per placement in plain torch, with tapegrad's parameter names, and trains
// it on exactly the batches tapegrad's train() draws: it gets their window starts from the
// export, not a random generator of its own. What differs is only the framework, and, unless
// shared, the random draws of the initial weights. export_initial_weights() shares them too:
// the losses then agree step by step to float32 rounding (tests/examples/depth_study_torch_twin.cpp).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <tapegrad/tapegrad.hpp>

#include "runs.hpp"

namespace depth_study {

// Everything a PyTorch run needs, spelled out: no dependency on the study's Settings. The
// defaults are TrainOptions' and ModelShape's. The vocabulary, the train tokens and the
// validation batches come from Data.
struct TorchSetup {
  std::int64_t d_model = 64, heads = 4, seq_len = 32, batch = 8, steps = 150, warmup = 15;
  double lr_default = 1e-3;  // the learning rate when `lrs` is empty
  std::string schedule = "cosine";  // cosine, linear, constant or noam, as training::make_schedule
  double min_lr_ratio = 0.1, weight_decay = 0.1, clip = 1.0, beta1 = 0.9, beta2 = 0.95;  // AdamW, eps 1e-8
  // "gpt2" (N(0, 0.02), residual projections / √(2L)), "gpt2-unscaled" (no residual-projection
  // scaling), "pytorch", "xavier": nn/model_init.hpp's schemes.
  std::string init = "gpt2";
  bool tie_head = true;  // the LM head is the token embedding (logits = h·Eᵀ)
  // The runs: every combination, in the order depth, placement, lr, seed (the last fastest).
  std::vector<std::string> placements = {"none", "post", "pre", "b2t"};  // a subset of these four
  std::vector<std::int64_t> depths = {6};
  std::vector<double> lrs;  // empty: {lr_default}
  std::vector<std::uint64_t> seeds = {1234};
};

struct TorchRun {
  std::string placement;
  std::int64_t depth = 0;
  double lr = 0;
  std::uint64_t seed = 0;
  // As TrainResult: "ok", "non-finite" (the run stopped there) or "no progress"; final_loss is
  // the mean training loss of the last tenth of the steps; NaN where the run diverged.
  std::string status;
  double initial_loss = 0, final_loss = 0, val_loss = 0, seconds = 0;
  std::vector<double> loss;  // [s] = training loss of step s + 1
  bool shared_init = false;  // started from export_initial_weights' file, not from torch's draws
};

struct TorchOutcome {
  std::vector<TorchRun> runs;  // in the order of TorchSetup's runs
  std::string skipped;         // why there are no runs ("python3 cannot import torch: ..."); empty when they ran
  std::string python;          // the interpreter that ran them
  std::string torch_version;   // "1.13.0a0"
  std::int64_t threads = 1;    // the threads torch ran on (the script checks torch.get_num_threads())
  double seconds = 0;          // wall time of the script, Python's start and torch's import included
};

// Writes into dir (created when missing):
//   setup.json                  the setup, the vocabulary size, the names of the files below
//   train_tokens.i32            the train split's tokens (int32, little-endian, as every file here)
//   validation_{inputs,targets}.i64   Data::validation's batches, rows concatenated (int64)
//   batch_starts_seed<s>.i64    per seed, the window starts of every step's batch (steps × batch)
// The batches are the ones train() draws: Generator(s ^ 0x5eedULL) and TokenStream::sample_batch,
// for the run whose model seed is s. That is the study's convention (main.cpp: batch_seed =
// seed ^ 0x5eedULL, build_model(..., seed)); a study that changes it must change it here too.
// Throws ValueError when the setup is invalid or the validation windows are not seq_len long.
void export_for_torch(const std::string& dir, const Data& data, const TorchSetup& setup);

// The file the script starts a run from instead of drawing its own weights, when it exists:
// dir/init_<placement>_L<depth>_seed<seed>.safetensors.
std::string initial_weights_path(const std::string& dir, const std::string& placement, std::int64_t depth,
                                 std::uint64_t seed);
// Writes model's state_dict (its current weights: call it before training) to that file.
void export_initial_weights(const std::string& dir, const tapegrad::nn::Module& model, const std::string& placement,
                            std::int64_t depth, std::uint64_t seed);

// Runs `<python> depth_study_torch.py dir --threads N` (the script beside this executable,
// found via /proc/self/exe), echoing its lines (one per run) to stdout, and reads back
// dir/torch_results.csv and dir/torch_losses.csv. python: "" tries `python3`, then
// /usr/bin/python3 (Debian's python3-torch). When neither (or the given one) can import torch,
// or the script is missing, returns no runs and `skipped` saying why. Throws std::runtime_error
// (with the script's last lines) when the script fails. threads: 1 by default, as each of
// tapegrad's worker processes runs one thread (--jobs), so that a run's seconds compare; the
// script exits with an error when torch does not keep to it.
TorchOutcome run_torch(const std::string& dir, const std::string& python, std::int64_t threads = 1);

}  // namespace depth_study
