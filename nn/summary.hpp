// summary.hpp — what a model is made of, as torchinfo prints it: the parameters of each module
// down to a depth, and the arithmetic per token.
//
//   std::cout << model.summary();                    // the table, 2 levels deep
//   const nn::Flops f = nn::flops_per_token(model, 64);
//   // f.forward, f.backward: FLOPs per token at a context of 64 tokens
//
// FLOPs count a multiply-add as 2, and only the matrix products, which are almost all of a
// transformer's arithmetic (norms, softmax and GELU are a few per element, below 1% at these
// sizes). Per token: each Linear of in × out features does 2·in·out; a tied LM head (logits =
// h·Eᵀ) does 2·d·V; self-attention over a context of T tokens does 2·T·D for the scores
// (q·kᵀ) and 2·T·D for the weighted values, D = heads × head_dim, computed in full and then
// masked, as tapegrad does. Backward is twice the forward: the gradient of a product
// y = x·W needs one product for dL/dx and one for dL/dW (Kaplan et al. 2020,
// https://arxiv.org/abs/2001.08361, "6N per token" for the whole step).
#pragma once

#include <cstdint>
#include <string>

#include "module.hpp"

namespace tapegrad::nn {

struct Flops {
  double forward = 0;   // per token
  double backward = 0;  // per token: 2 × forward
  double step() const { return forward + backward; }
};

// The matrix-product FLOPs per token of a forward and a backward over a context of seq_len
// tokens (every Linear and MultiHeadAttention below `model`, and a tied LM head).
Flops flops_per_token(const Module& model, std::int64_t seq_len);

// "812.5k", "21.4M", "1.23G": a count in three significant digits.
std::string short_count(double n);

}  // namespace tapegrad::nn
