// model_init.hpp — initialization schemes for whole transformer stacks.
//
//   pytorch  each module's own default (Linear: U(±1/√in); Embedding: N(0, 1))
//   gpt2     every Linear and Embedding weight ~ N(0, 0.02²), biases 0; the projections that
//            write into the residual stream (attention out_proj, FFN fc2) ~ N(0, (0.02/√(2L))²)
//            (Radford et al. 2019)
//   xavier   Linear weights ~ Xavier-uniform, biases 0, embeddings ~ N(0, 1/d_model)
// On top of the scheme, per placement:
//   deepnorm the FFN weights and the value and output projections are drawn Xavier-normal with
//            gain β instead (Wang et al. 2022); queries and keys with gain 1.
//   b2t_scaling (optional, off by default) every Linear weight of the blocks is multiplied by
//            L^(-1/2), L = layers on that side, a depth-scaled init some B2T setups use. Off by
//            default: B2T is the connection alone, and in examples/translate (300 steps,
//            d_model 64) the scaled B2T models learned far slower (val loss 0.78 vs 0.007 at
//            6 layers per side).
// Norm gains stay 1 and norm biases 0; AdaLN-Zero modulations stay 0.
#pragma once

#include <cstdint>
#include <string>

#include "containers.hpp"
#include "embedding.hpp"
#include "transformer_block.hpp"

namespace tapegrad::nn {

enum class InitScheme { pytorch, gpt2, xavier };
std::string init_scheme_name(InitScheme s);
InitScheme init_scheme_from_name(const std::string& name);

// DeepNorm's constants (Wang et al. 2022, Table 1). N encoder layers, M decoder layers.
struct DeepNormConstants {
  double alpha = 1.0, beta = 1.0;
};
DeepNormConstants deepnorm_decoder_only(std::int64_t M);          // α = (2M)^¼, β = (8M)^-¼
DeepNormConstants deepnorm_encoder_only(std::int64_t N);          // α = (2N)^¼, β = (8N)^-¼
DeepNormConstants deepnorm_encoder(std::int64_t N, std::int64_t M);  // α = 0.81(N⁴M)^(1/16), β = 0.87(N⁴M)^(-1/16)
DeepNormConstants deepnorm_decoder(std::int64_t M);               // α = (3M)^¼, β = (12M)^-¼

// Initializes the blocks of one stack (encoder, decoder or a decoder-only LM).
// beta is DeepNorm's β (used when the blocks' placement is deepnorm); b2t_scaling multiplies
// the blocks' Linear weights by L^(-1/2).
void init_blocks(ModuleList& blocks, InitScheme scheme, double beta, bool b2t_scaling);
// Embedding weights per the scheme (d_model for xavier's 1/d_model variance).
void init_embedding(Embedding& emb, InitScheme scheme);

}  // namespace tapegrad::nn
