// settings.hpp — every setting of adaln_conditional; each one is a command-line option (main.cpp).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/settings.hpp"

namespace adaln_conditional {

// The optimizer, schedule and steps (Training), seed, threads, --out, --smoke, --check
// (Machinery), and the rest:
struct Settings : study::Training, study::Machinery {
  std::vector<std::string> tasks = {"copy", "reverse", "sort"};
  std::int64_t symbols = 8, min_len = 1, max_len = 8;
  std::int64_t layers = 2, d_model = 64, heads = 4, batch = 32;
  std::int64_t eval_interval = 100, val_per_task = 128, examples = 2;
  std::string init = "gpt2";

  Settings() {
    lr = 2e-3, weight_decay = 0.01, min_lr_ratio = 0.1, clip = 1.0, beta2 = 0.95, steps = 2000, warmup = 100;
    seed = 1, out = "adaln_out";
  }
};

}  // namespace adaln_conditional
