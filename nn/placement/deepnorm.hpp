// deepnorm.hpp — DeepNorm's constants (Wang et al. 2022, "DeepNet: Scaling Transformers to
// 1,000 Layers", arXiv 2203.00555, Table 1), computed here and nowhere else: the deepnorm
// placement (deepnorm.cpp) takes its residual scale α and its init gain β from them.
// N encoder layers, M decoder layers.
#pragma once

#include <cstdint>

#include "placement.hpp"

namespace tapegrad::nn {

struct DeepNormConstants {
  double alpha = 1.0, beta = 1.0;
};
DeepNormConstants deepnorm_decoder_only(std::int64_t M);             // α = (2M)^¼, β = (8M)^-¼
DeepNormConstants deepnorm_encoder_only(std::int64_t N);             // α = (2N)^¼, β = (8N)^-¼
DeepNormConstants deepnorm_encoder(std::int64_t N, std::int64_t M);  // α = 0.81(N⁴M)^(1/16), β = 0.87(N⁴M)^(-1/16)
DeepNormConstants deepnorm_decoder(std::int64_t M);                  // α = (3M)^¼, β = (12M)^-¼
// The constants of a block in `stack` (an encoder without a decoder: encoder-only).
DeepNormConstants deepnorm_constants(const Stack& stack);

}  // namespace tapegrad::nn
