// metrics.hpp — what a classifier's training loop prints besides its loss:
//
//   double acc = nn::accuracy(logits, targets);   // logits (N, C), targets int64 (N): 0.93
//
// A metric is a number, not a graph: nothing is recorded, whatever requires grad.
#pragma once

#include <cstdint>

#include "../autograd/tensor.hpp"

namespace tapegrad::nn {

// The share of rows whose largest logit (argmax over the last dim, the first on a tie) is the
// target: logits (..., C), targets int64 (...). Targets equal to ignore_index are left out, as
// cross_entropy leaves them out of the loss; with none left, ValueError.
double accuracy(const Tensor& logits, const Tensor& targets, std::int64_t ignore_index = -100);

}  // namespace tapegrad::nn
