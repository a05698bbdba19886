// torch_twin.hpp — placeholder until the PyTorch twin lands.
#pragma once
#include <cstdint>
#include <string>
#include <vector>
#include "runs.hpp"
namespace depth_study {
struct TorchSetup {
  std::int64_t vocab_size = 0, d_model = 0, heads = 0, seq_len = 0, batch = 0, steps = 0, warmup = 0;
  double lr_default = 0;
  std::string schedule;
  double min_lr_ratio = 0, weight_decay = 0, clip = 0, beta1 = 0.9, beta2 = 0.95;
  std::string init;
  bool tie_head = false;
  std::vector<std::string> placements;
  std::vector<std::int64_t> depths;
  std::vector<double> lrs;
  std::vector<std::uint64_t> seeds;
};
struct TorchRun {
  std::string placement;
  std::int64_t depth = 0;
  double lr = 0;
  std::uint64_t seed = 0;
  std::string status;
  double initial_loss = 0, final_loss = 0, val_loss = 0, seconds = 0;
};
struct TorchOutcome {
  std::vector<TorchRun> runs;
  std::string skipped, python, torch_version;
};
inline void export_for_torch(const std::string&, const Data&, const TorchSetup&) {}
inline TorchOutcome run_torch(const std::string&, const std::string&) { return {{}, "not built yet", "", ""}; }
}  // namespace depth_study
