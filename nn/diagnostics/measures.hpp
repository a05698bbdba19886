// measures.hpp — the two numbers every diagnostic of this folder is made of: the L2 norm of a
// tensor and the mean over tokens of the cosine between two streams. Computed in double, with
// no tape (NoGradGuard inside): a diagnostic observes a forward, it never joins its graph.
#pragma once

#include "../../autograd/tensor.hpp"

namespace tapegrad::nn {

// ‖t‖₂ = sqrt(Σ t²) over every element (the whole batch), summed in double.
double l2_norm(const Tensor& t);
// (1/N) Σ_tokens cos(a_t, b_t), a and b (..., C) of one shape, N the number of tokens (all
// dims but the last). A zero vector has cosine 0 with anything (its norm is clamped to 1e-12).
// ShapeError naming op and both shapes when they differ.
double mean_token_cosine(const Tensor& a, const Tensor& b, const char* op = "mean_token_cosine");

}  // namespace tapegrad::nn
