// settings.hpp — every setting of a depth-study run; each one is a command-line option of
// depth_study. The defaults (d_model 64, 4 heads, 32 tokens of context, batches of 8, 150
// steps; the sweep at depth 12 for 80 steps) were sized so that the whole study, 16 trained
// runs up to 48 blocks deep, finishes in about ten minutes on 2 cores.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "runs.hpp"

namespace depth_study {

struct Settings : study::Machinery {  // seed, threads, --out, --smoke, --check
  // data
  std::string data;  // empty: the default corpus (data::Corpus::default_corpus)
  std::string tokenizer = "char";
  std::int64_t bpe_vocab = 512;
  // what is compared
  std::vector<std::string> placements = {"none", "post", "pre", "b2t"};
  std::vector<std::int64_t> depths = {6, 12, 24, 48};
  std::vector<std::string> inits = {"gpt2"};                             // trained runs
  std::vector<std::string> compare_inits = {"gpt2", "pytorch", "xavier"};  // measured at initialization only
  // model and training, the same for every run
  ModelShape shape;
  TrainOptions train;
  std::int64_t probe_batch = 16, eval_batches = 8;
  // learning-rate sweep
  std::int64_t sweep_depth = 12, sweep_steps = 80;
  std::vector<double> sweep_lrs = {3e-4, 1e-3, 3e-3, 1e-2};

  Settings() { seed = 1234, out = "depth_study_out"; }

  // The inits measured at all: the trained ones, then the other compared ones.
  std::vector<std::string> all_inits() const {
    std::vector<std::string> all = inits;
    for (const auto& i : compare_inits)
      if (std::find(all.begin(), all.end(), i) == all.end()) all.push_back(i);
    return all;
  }
  bool is_trained(const std::string& init) const { return std::find(inits.begin(), inits.end(), init) != inits.end(); }
};

}  // namespace depth_study
