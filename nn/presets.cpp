// presets.cpp — the GPT-2 and LLaMA configurations (presets.hpp has the table).
#include "presets.hpp"

namespace tapegrad::nn {

std::int64_t llama_ffn_hidden(std::int64_t d_model, std::int64_t multiple_of) {
  if (d_model <= 0 || multiple_of <= 0)
    throw ValueError("llama_ffn_hidden: d_model (" + std::to_string(d_model) + ") and multiple_of (" +
                     std::to_string(multiple_of) + ") must be positive");
  const std::int64_t hidden = 2 * 4 * d_model / 3;  // int(2 · 4d / 3), as Meta's code
  return multiple_of * ((hidden + multiple_of - 1) / multiple_of);
}

namespace {
TransformerLMConfig shaped(const ModelShape& s) {
  TransformerLMConfig c;
  c.vocab_size = s.vocab_size;
  c.max_seq_len = s.max_seq_len;
  c.n_layers = s.n_layers;
  c.block.d_model = s.d_model;
  c.block.n_heads = s.n_heads;
  c.block.n_kv_heads = s.n_kv_heads;
  return c;
}
}  // namespace

TransformerLMConfig gpt2_config(const ModelShape& shape) {
  TransformerLMConfig c = shaped(shape);
  c.block.activation = Activation::gelu_tanh;  // GPT-2's gelu is the tanh approximation
  c.block.norm = NormKind::layernorm;
  c.block.placement = Placement::pre;
  c.block.norm_eps = 1e-5;
  c.tie_weights = true;
  c.init = InitScheme::gpt2;
  return c;
}

TransformerLMConfig llama_config(const ModelShape& shape, std::int64_t ffn_multiple_of) {
  TransformerLMConfig c = shaped(shape);
  c.block.activation = Activation::swiglu;
  c.block.d_ff = llama_ffn_hidden(shape.d_model, ffn_multiple_of);
  c.block.norm = NormKind::rmsnorm;
  c.block.placement = Placement::pre;  // and its final norm
  c.block.norm_eps = 1e-6;             // Hugging Face's LlamaConfig.rms_norm_eps
  c.block.bias = false;
  c.block.rope = true;
  c.block.rope_theta = 10000.0;
  c.tie_weights = false;
  // Normal(0, 0.02) weights and no residual-projection scaling, as Meta's recipe.
  c.init = InitScheme::gpt2_unscaled;
  return c;
}

TransformerLMConfig preset_config(const std::string& name, const ModelShape& shape) {
  if (name == "gpt2") return gpt2_config(shape);
  if (name == "llama") return llama_config(shape);
  throw ValueError("unknown model preset '" + name + "' (expected " + preset_names() + ")");
}

std::string preset_names() { return "gpt2 or llama"; }

}  // namespace tapegrad::nn
