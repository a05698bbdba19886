// model_init.hpp — initialization schemes for whole transformer stacks.
//
//   pytorch  each module's own default (Linear: U(±1/√in); Embedding: N(0, 1))
//   gpt2     every Linear and Embedding weight ~ N(0, 0.02²), biases 0; the projections that
//            write into the residual stream (attention out_proj, FFN fc2) ~ N(0, (0.02/√(2L))²)
//            (Radford et al. 2019)
//   gpt2-unscaled  gpt2 without the 1/√(2L) of the residual projections: every Linear weight
//            N(0, 0.02²). The depth study shows the scaling side by side with this (claims
//            about Post-LN depend on it).
//   xavier   Linear weights ~ Xavier-uniform, biases 0, embeddings ~ N(0, 1/d_model)
// On top of the scheme:
//   placement  a placement may re-draw some weights after the scheme (its registry entry's
//            init hooks): DeepNorm draws the FFN weights and the value and output
//            projections Xavier-normal with gain β (nn/placement/deepnorm.cpp).
//   b2t_scaling (optional, off by default) every Linear weight of the blocks is multiplied by
//            L^(-1/2), L = layers on that side, a depth-scaled init some B2T setups use. Off by
//            default: B2T is the connection alone, and in examples/studies/translate (300 steps,
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

enum class InitScheme { pytorch, gpt2, gpt2_unscaled, xavier };
std::string init_scheme_name(InitScheme s);
InitScheme init_scheme_from_name(const std::string& name);

// Initializes the blocks of one stack (encoder, decoder or a decoder-only LM), each block as its
// placement asks (for the stack it was built in); b2t_scaling multiplies the blocks' Linear
// weights by L^(-1/2).
void init_blocks(ModuleList& blocks, InitScheme scheme, bool b2t_scaling);
// Embedding weights per the scheme (d_model for xavier's 1/d_model variance).
void init_embedding(Embedding& emb, InitScheme scheme);

}  // namespace tapegrad::nn
