// exercise.hpp — exercise 8: the cross-entropy loss of a classifier, one node on tapegrad's tape.
// The student writes its forward and its backward in exercise.cpp.
#pragma once

#include <tapegrad/tapegrad.hpp>

namespace learn {

// logits: (N, C) float64, one row of scores per example; targets: (N) int64, each in [0, C).
//   loss = (1/N) Σ_n [ logsumexp(logits[n]) − logits[n, targets[n]] ]    (a scalar)
// with logsumexp(r) = m + log Σ exp(r − m), m = max(r). Backward, for g = dL/dloss:
//   dL/dlogits = g · (softmax(logits) − one_hot(targets)) / N
tapegrad::Tensor cross_entropy(const tapegrad::Tensor& logits, const tapegrad::Tensor& targets);

// Given (one_hot.cpp): the (N, C) float64 tensor with 1 at (n, targets[n]) and 0 elsewhere.
tapegrad::Tensor one_hot(const tapegrad::Tensor& targets, std::int64_t classes);

}  // namespace learn
