// settings.hpp — every setting of translate; each one is a command-line option (main.cpp).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/settings.hpp"

namespace translate {

// The optimizer, schedule and steps (Training), seed, threads, --out, --smoke, --check
// (Machinery), and the rest:
struct Settings : study::Training, study::Machinery {
  std::vector<std::string> placements = {"post", "pre", "b2t"};
  std::vector<std::int64_t> layers = {6, 18};
  std::int64_t d_model = 64, heads = 4, d_ff = 0, batch = 32;
  std::int64_t eval_interval = 25, val_size = 256, examples = 3;
  double dropout = 0.0;
  std::string init = "xavier", activation = "relu";
  std::string b2t_scaling = "off";  // off, b2t (the b2t runs only) or on (every run)

  Settings() {  // β₂ = 0.98 as in Vaswani et al. 2017
    lr = 1e-3, weight_decay = 0.01, min_lr_ratio = 0.1, clip = 0.0, beta2 = 0.98, steps = 300, warmup = 30;
    seed = 1, out = "translate_out";
  }
  // Whether a run scales its block weights by L^(-1/2) (model_init.hpp's b2t_scaling).
  bool scaled(const std::string& placement) const {
    return b2t_scaling == "on" || (b2t_scaling == "b2t" && placement == "b2t");
  }
};

}  // namespace translate
