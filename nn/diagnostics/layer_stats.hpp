// layer_stats.hpp — do layers collapse? The RMS of each block's output and the cosine between
// consecutive ones: a cosine near 1 says a block hardly turns the stream (Pre-LN's deep
// layers, Liu et al. 2020 "Understanding the Difficulty of Training Transformers").
#pragma once

#include <vector>

#include "../../autograd/tensor.hpp"

namespace tapegrad::nn {

struct LayerStats {
  std::vector<double> rms;                 // rms[l] = sqrt(mean(h_l²)) of block l's output
  std::vector<double> cosine_to_previous;  // [l] = mean over tokens of cos(h_l, h_{l-1}); [0] uses the block input
};
// outputs: each block's output (B, T, C), e.g. what an OutputRecorder on the blocks kept;
// input: what the first block received (may be undefined: then cosine_to_previous[0] is NaN).
LayerStats layer_stats(const std::vector<Tensor>& outputs, const Tensor& input = Tensor());

}  // namespace tapegrad::nn
