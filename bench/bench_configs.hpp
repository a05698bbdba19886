// bench_configs.hpp — the benchmark models S, M, G and L (bench/README.md), shared by
// train_step and bench_adamw so that both time the same model: a GPT-2-style LM with learned
// positions, a tied head, a GELU-tanh MLP 4x and GPT-2's initialization.
#pragma once

#include <cstdint>
#include <string>

#include <tapegrad/tapegrad.hpp>

namespace tapegrad::bench {

struct BenchConfig {
  std::int64_t layers, d_model, heads, seq_len, batch, vocab;
};

inline BenchConfig config_named(const std::string& name) {
  if (name == "S") return {4, 128, 4, 64, 8, 256};
  if (name == "M") return {6, 384, 6, 256, 8, 256};
  if (name == "G") return {12, 768, 12, 64, 4, 50257};
  if (name == "L") return {6, 384, 6, 2048, 1, 256};  // long context: M's model at T 2048
  throw ValueError("--config: unknown config '" + name + "' (S, M, G or L)");
}

// The LM of a config, with the residual placement by name ("pre", "post", … see
// nn::placement_from_name).
inline nn::TransformerLMConfig lm_config_of(const BenchConfig& c, const std::string& placement = "pre") {
  nn::TransformerLMConfig mc;
  mc.vocab_size = c.vocab;
  mc.max_seq_len = c.seq_len;
  mc.n_layers = c.layers;
  mc.block.d_model = c.d_model;
  mc.block.n_heads = c.heads;
  mc.block.activation = nn::Activation::gelu_tanh;
  mc.block.placement = nn::placement_from_name(placement);
  mc.tie_weights = true;
  mc.init = nn::InitScheme::gpt2;
  return mc;
}

}  // namespace tapegrad::bench
