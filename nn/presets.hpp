// presets.hpp — named TransformerLM configurations: the GPT-2 design that is tapegrad's
// default, and the LLaMA design that most decoders of today follow. Each is one function that
// fills a TransformerLMConfig; every field stays settable afterwards.
//
//                 GPT-2 (Radford et al. 2019)          LLaMA (Touvron et al. 2023, arXiv 2302.13971)
//   positions     learned table pos_emb                rotary (RoPE, θ = 10000) in every attention
//   norm          Pre-LN, LayerNorm (ε 1e-5)           Pre-RMSNorm (ε 1e-6), final RMSNorm
//   FFN           GELU (tanh form), hidden 4·d         SwiGLU, hidden 2/3·4·d rounded up to a multiple
//   attention     multi-head                           grouped-query (n_kv_heads; LLaMA 2 70B, LLaMA 3)
//   biases        everywhere                           none
//   LM head       tied to the token embedding          a separate Linear
#pragma once

#include "transformer_lm.hpp"

namespace tapegrad::nn {

// The shape of a model, whichever design fills in the rest.
struct ModelShape {
  std::int64_t vocab_size = 256;
  std::int64_t max_seq_len = 256;
  std::int64_t n_layers = 4;
  std::int64_t d_model = 128;
  std::int64_t n_heads = 4;
  std::int64_t n_kv_heads = 0;  // 0: n_heads (multi-head attention)
};

// LLaMA's FFN width: SwiGLU has three matrices instead of two, so 2/3 of 4·d keeps the
// parameters of a 4·d MLP; Meta's code then rounds up to a multiple of multiple_of (256):
//   hidden = multiple_of · ⌈⌊8d/3⌋ / multiple_of⌉      d = 4096 -> 11008
std::int64_t llama_ffn_hidden(std::int64_t d_model, std::int64_t multiple_of = 256);

TransformerLMConfig gpt2_config(const ModelShape& shape);
TransformerLMConfig llama_config(const ModelShape& shape, std::int64_t ffn_multiple_of = 256);

// "gpt2" or "llama" -> its config; ValueError naming the choices otherwise.
TransformerLMConfig preset_config(const std::string& name, const ModelShape& shape);
// "gpt2 or llama"
std::string preset_names();

}  // namespace tapegrad::nn
