// hf_gpt2.hpp — GPT-2 checkpoints in the Hugging Face layout (transformers' GPT2Model /
// GPT2LMHeadModel: a folder with config.json and model.safetensors) to and from a
// TransformerLM built with nn::gpt2_config.
//
//   auto lm = io::load_hf_gpt2("gpt2-folder");   // config.json + model.safetensors
//   io::save_hf_gpt2(*lm, "out-folder");         // the same two files, re-readable by both
//
// Hugging Face's names (with or without the "transformer." prefix) -> tapegrad's:
//   wte.weight (V, C)                -> tok_emb.weight        (lm_head is tied to it)
//   wpe.weight (P, C)                -> pos_emb.weight
//   h.N.ln_1.{weight,bias}           -> blocks.N.attn_residual.norm.*
//   h.N.attn.c_attn.weight (C, 3C)   -> blocks.N.attn.qkv.weight (3C, C), transposed
//   h.N.attn.c_proj.weight (C, C)    -> blocks.N.attn.out_proj.weight, transposed
//   h.N.ln_2.*                       -> blocks.N.ffn_residual.norm.*
//   h.N.mlp.c_fc.weight (C, F)       -> blocks.N.ffn.fc1.weight (F, C), transposed
//   h.N.mlp.c_proj.weight (F, C)     -> blocks.N.ffn.fc2.weight (C, F), transposed
//   ln_f.*                           -> final_norm.*
// GPT-2's Conv1D stores weights as (in, out), y = x·W + b, where a Linear stores (out, in);
// c_attn's out axis holds q | k | v, the order of tapegrad's fused qkv rows. Biases map as
// they are. Ignored on import: the causal-mask buffers h.N.attn.bias and h.N.attn.masked_bias
// of older files, and lm_head.weight when it equals wte.weight (tied); an untied head is refused.
//
// config.json: n_layer, n_embd, n_head, vocab_size, n_positions are required; n_inner (null:
// 4·n_embd), layer_norm_epsilon (1e-5) and activation_function ("gelu_new") are read. tapegrad's
// gelu_tanh is gelu_new (0.5x(1 + tanh(√(2/π)(x + 0.044715x³)))); "gelu" (the erf form) maps to
// tapegrad's gelu; other activations, scale_attn_weights false, scale_attn_by_inverse_layer_idx
// true, tie_word_embeddings false and a model_type other than "gpt2" are refused by name.
// (reorder_and_upcast_attn only changes float16 rounding; tapegrad computes in float32.)
#pragma once

#include <memory>
#include <string>

#include "../nn/transformer_lm.hpp"
#include "hf_config.hpp"
#include "state_dict.hpp"

namespace tapegrad::io {

// The TransformerLM config of a GPT-2 config.json. Throws FormatError naming the file and field.
nn::TransformerLMConfig gpt2_config_from_hf(const HfConfig& hf);
// The config.json text of a gpt2-design config; ValueError for a config GPT-2 cannot express.
std::string gpt2_config_to_hf(const nn::TransformerLMConfig& config);

// Hugging Face tensors -> tapegrad's state dict for `config`, every tensor checked: missing,
// unexpected, wrong shape or dtype -> FormatError naming `source`, the tensor and the shapes.
StateDict gpt2_state_from_hf(const StateDict& hf, const nn::TransformerLMConfig& config, const std::string& source);
// tapegrad's state dict -> Hugging Face tensors (no prefix), float32, in model order.
StateDict gpt2_state_to_hf(const StateDict& state, const nn::TransformerLMConfig& config);

// dir/config.json + dir/model.safetensors -> a model in eval mode.
std::shared_ptr<nn::TransformerLM> load_hf_gpt2(const std::string& dir);
// Writes dir/config.json and dir/model.safetensors (F32; dir must exist). A float64 model is
// refused by name.
void save_hf_gpt2(const nn::TransformerLM& model, const std::string& dir);

}  // namespace tapegrad::io
