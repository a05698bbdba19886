// plain.cpp — the plain stream: block l reads what block l − 1 wrote, and nothing else.
//
//   x_0 = embed(tokens);   x_l = block_l(x_{l−1});   the head reads x_L
//
// Every placement (nn/placement/) is a formula for block_l alone; under this scheme they are
// the models of the papers that introduced them (GPT-2, LLaMA, B2T, ...). The base class's
// steps are this scheme.
#include "stream.hpp"

namespace tapegrad::nn {

StreamInfo plain_stream() {
  return {.name = "plain",
          .label = "plain",
          .formula = "x_l = block_l(x_{l−1}): each block reads the one before it",
          .paper = "Vaswani et al. 2017; He et al. 2016 (the residual connection)",
          .hf_equivalent = true,
          .make = [](const StreamBuild&) { return std::make_shared<ResidualStream>(); }};
}

}  // namespace tapegrad::nn
