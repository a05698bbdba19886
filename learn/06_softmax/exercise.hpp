// exercise.hpp — exercise 6: softmax and log-softmax over the last dim, each one node on
// tapegrad's tape with a backward of its own. The student writes both in exercise.cpp.
#pragma once

#include <tapegrad/tapegrad.hpp>

namespace learn {

// y = exp(x − max) / Σ exp(x − max), over the last dim of x (float64, any shape with at least
// one dim). Backward: dx = y ⊙ (g − Σ g ⊙ y), the sum over the last dim.
tapegrad::Tensor softmax(const tapegrad::Tensor& x);
// z = x − max − log Σ exp(x − max), over the last dim. Backward: dx = g − softmax(x) · Σ g.
tapegrad::Tensor log_softmax(const tapegrad::Tensor& x);

}  // namespace learn
