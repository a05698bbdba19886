// Exercise 10: a Pre-LN transformer block's forward, from its formula. test.cpp, exercise.cpp
// and solution.cpp include this header; you edit only exercise.cpp. README.md explains it.
#pragma once

#include <cstdint>
#include <memory>

#include <tapegrad/tapegrad.hpp>

#include "scalar/value.hpp"  // learn::Todo

namespace learn {

// The pieces of one transformer block: two LayerNorms, self-attention and a feed-forward network
// (d_model → 4·d_model → d_model, GELU), the library's own modules, built and registered here.
// You write how they are joined to the residual stream: forward (Pre-LN) and, optionally,
// b2t_forward (B2T).
class PreLNBlock : public tapegrad::nn::UnaryModule {
 public:
  PreLNBlock(std::int64_t d_model, std::int64_t n_heads, tapegrad::DType dtype = tapegrad::DType::float32)
      : UnaryModule("PreLNBlock") {
    namespace nn = tapegrad::nn;
    ln1 = register_module("ln1", std::make_shared<nn::LayerNorm>(nn::NormOptions(d_model).dtype(dtype)));
    attn = register_module("attn", std::make_shared<nn::MultiHeadAttention>(
                                       nn::MultiHeadAttentionOptions(d_model, n_heads).dtype(dtype)));
    ln2 = register_module("ln2", std::make_shared<nn::LayerNorm>(nn::NormOptions(d_model).dtype(dtype)));
    ffn = register_module("ffn", std::make_shared<nn::FeedForward>(
                                     nn::FeedForwardOptions(d_model, 4 * d_model).dtype(dtype)));
  }

  // Pre-LN (GPT-2): h = x + Attn(LN1(x)),  y = h + FFN(LN2(h)).  x: (B, T, d_model) -> the same.
  tapegrad::Tensor forward(const tapegrad::Tensor& x) override;
  // Optional, B2T (Takase et al. 2022), the same pieces placed differently:
  //   h = LN1(x + Attn(x)),  y = LN2(h + FFN(h) + x).
  tapegrad::Tensor b2t_forward(const tapegrad::Tensor& x);

  std::shared_ptr<tapegrad::nn::LayerNorm> ln1, ln2;
  std::shared_ptr<tapegrad::nn::MultiHeadAttention> attn;  // attn->forward(h): (B, T, d_model) -> the same
  std::shared_ptr<tapegrad::nn::FeedForward> ffn;          // ffn->forward(h): the same
};

}  // namespace learn
