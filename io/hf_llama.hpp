// hf_llama.hpp — LLaMA checkpoints in the Hugging Face layout (transformers' LlamaForCausalLM:
// config.json + model.safetensors) to and from a TransformerLM built with nn::llama_config.
//
//   auto lm = io::load_hf_llama("llama-folder");
//   io::save_hf_llama(*lm, "out-folder");
//
// Hugging Face's names -> tapegrad's (every weight is a Linear's (out, in): no transposes):
//   model.embed_tokens.weight                 -> tok_emb.weight
//   model.layers.N.input_layernorm.weight     -> blocks.N.attn_residual.norm.weight
//   model.layers.N.self_attn.{q,k,v}_proj     -> blocks.N.attn.qkv.weight: rows q, then k, then v
//   model.layers.N.self_attn.o_proj           -> blocks.N.attn.out_proj.weight
//   model.layers.N.post_attention_layernorm   -> blocks.N.ffn_residual.norm.weight
//   model.layers.N.mlp.gate_proj              -> blocks.N.ffn.fc1.weight     (the silu'd one)
//   model.layers.N.mlp.up_proj                -> blocks.N.ffn.fc_gate.weight (the multiplier)
//   model.layers.N.mlp.down_proj              -> blocks.N.ffn.fc2.weight
//   model.norm.weight                         -> final_norm.weight
//   lm_head.weight                            -> lm_head.weight (absent or equal to the
//                                                embedding when tie_word_embeddings is true)
// RoPE: Hugging Face's q_proj/k_proj rows are permuted from Meta's so that its rotate_half
// layout pairs (x_i, x_i+D/2); tapegrad's default RoPE (rope_interleaved false) is that same
// layout, so the rows are copied as they are.
//
// config.json: hidden_size, intermediate_size, num_hidden_layers, num_attention_heads,
// vocab_size, max_position_embeddings are required; num_key_value_heads (= heads),
// rms_norm_eps (1e-6), rope_theta (10000), tie_word_embeddings (false) are read. Refused by name:
// hidden_act other than silu, rope_scaling, attention_bias or mlp_bias true, a head_dim other
// than hidden_size / num_attention_heads, a model_type other than "llama".
#pragma once

#include <memory>
#include <string>

#include "../nn/transformer_lm.hpp"
#include "hf_config.hpp"
#include "state_dict.hpp"

namespace tapegrad::io {

nn::TransformerLMConfig llama_config_from_hf(const HfConfig& hf);
std::string llama_config_to_hf(const nn::TransformerLMConfig& config);

StateDict llama_state_from_hf(const StateDict& hf, const nn::TransformerLMConfig& config, const std::string& source);
StateDict llama_state_to_hf(const StateDict& state, const nn::TransformerLMConfig& config);

std::shared_ptr<nn::TransformerLM> load_hf_llama(const std::string& dir);
// Writes dir/config.json and dir/model.safetensors (F32). A float64 model is refused by name.
void save_hf_llama(const nn::TransformerLM& model, const std::string& dir);

}  // namespace tapegrad::io
