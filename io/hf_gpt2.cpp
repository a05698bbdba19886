// hf_gpt2.cpp — the GPT-2 name and layout mapping of hf_gpt2.hpp, and its folder I/O.
#include "hf_gpt2.hpp"

#include "../nn/presets.hpp"
#include "errors.hpp"
#include "file.hpp"
#include "hf_tensors.hpp"
#include "safetensors.hpp"

namespace tapegrad::io {

namespace {

// One tensor: its Hugging Face name, tapegrad's name, tapegrad's shape, and whether the
// Hugging Face tensor is the transpose (Conv1D's (in, out)).
std::vector<HfTensor> gpt2_tensors(const nn::TransformerLMConfig& c) {
  const std::int64_t C = c.block.d_model, F = c.block.ff_dim(), V = c.vocab_size, P = c.max_seq_len;
  std::vector<HfTensor> t = {{"wte.weight", "tok_emb.weight", {V, C}, false},
                             {"wpe.weight", "pos_emb.weight", {P, C}, false}};
  for (std::int64_t l = 0; l < c.n_layers; ++l) {
    const std::string h = "h." + std::to_string(l) + ".", b = "blocks." + std::to_string(l) + ".";
    const std::vector<HfTensor> layer = {
        {h + "ln_1.weight", b + "attn_residual.norm.weight", {C}, false},
        {h + "ln_1.bias", b + "attn_residual.norm.bias", {C}, false},
        {h + "attn.c_attn.weight", b + "attn.qkv.weight", {3 * C, C}, true},
        {h + "attn.c_attn.bias", b + "attn.qkv.bias", {3 * C}, false},
        {h + "attn.c_proj.weight", b + "attn.out_proj.weight", {C, C}, true},
        {h + "attn.c_proj.bias", b + "attn.out_proj.bias", {C}, false},
        {h + "ln_2.weight", b + "ffn_residual.norm.weight", {C}, false},
        {h + "ln_2.bias", b + "ffn_residual.norm.bias", {C}, false},
        {h + "mlp.c_fc.weight", b + "ffn.fc1.weight", {F, C}, true},
        {h + "mlp.c_fc.bias", b + "ffn.fc1.bias", {F}, false},
        {h + "mlp.c_proj.weight", b + "ffn.fc2.weight", {C, F}, true},
        {h + "mlp.c_proj.bias", b + "ffn.fc2.bias", {C}, false},
    };
    t.insert(t.end(), layer.begin(), layer.end());
  }
  t.push_back({"ln_f.weight", "final_norm.weight", {C}, false});
  t.push_back({"ln_f.bias", "final_norm.bias", {C}, false});
  return t;
}

// Tensors of Hugging Face files that hold no parameter: the causal-mask buffers.
bool is_gpt2_buffer(const std::string& name) {
  const auto ends_with = [&](const std::string& suffix) {
    return name.size() > suffix.size() && name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0;
  };
  return name.rfind("h.", 0) == 0 && (ends_with(".attn.bias") || ends_with(".attn.masked_bias"));
}

}  // namespace

nn::TransformerLMConfig gpt2_config_from_hf(const HfConfig& hf) {
  const std::string& src = hf.source();
  const std::string type = hf.string_or("model_type", "gpt2");
  if (type != "gpt2") throw FormatError(src + ": model_type is \"" + type + "\", not \"gpt2\"");
  nn::ModelShape shape;
  shape.n_layers = hf.size("n_layer");
  shape.d_model = hf.size("n_embd");
  shape.n_heads = hf.size("n_head");
  shape.vocab_size = hf.size("vocab_size");
  shape.max_seq_len = hf.size("n_positions");
  nn::TransformerLMConfig c = nn::gpt2_config(shape);
  c.block.d_ff = hf.size_or("n_inner", 0);  // null: 4·n_embd
  c.block.norm_eps = hf.positive_number_or("layer_norm_epsilon", 1e-5);
  const std::string act = hf.string_or("activation_function", "gelu_new");
  if (act == "gelu_new" || act == "gelu_pytorch_tanh") c.block.activation = nn::Activation::gelu_tanh;
  else if (act == "gelu") c.block.activation = nn::Activation::gelu;
  else
    throw FormatError(src + ": activation_function \"" + act +
                      "\" is not one tapegrad has (gelu_new, gelu_pytorch_tanh: its gelu_tanh; gelu: its gelu)");
  if (!hf.boolean_or("scale_attn_weights", true))
    throw FormatError(src + ": scale_attn_weights false (no 1/sqrt(D) in attention) is not supported");
  if (hf.boolean_or("scale_attn_by_inverse_layer_idx", false))
    throw FormatError(src + ": scale_attn_by_inverse_layer_idx is not supported");
  if (!hf.boolean_or("tie_word_embeddings", true))
    throw FormatError(src + ": tie_word_embeddings false: tapegrad's GPT-2 ties lm_head to wte");
  return validated_hf_config(c, src);
}

std::string gpt2_config_to_hf(const nn::TransformerLMConfig& c) {
  // A GPT-2 is exactly gpt2_config of its shape up to the settings that do not change the
  // function computed in eval mode (dropout, init, dtype) and the two that config.json holds.
  refuse_stream_without_hf(c, "save_hf_gpt2");
  nn::TransformerLMConfig expected = with_eval_neutral_settings(
      nn::gpt2_config({c.vocab_size, c.max_seq_len, c.n_layers, c.block.d_model, c.block.n_heads, c.block.n_kv_heads}), c);
  expected.block.d_ff = c.block.d_ff;
  expected.block.norm_eps = c.block.norm_eps;
  if (c.block.activation == nn::Activation::gelu) expected.block.activation = nn::Activation::gelu;
  if (c.block.n_kv_heads == c.block.n_heads) expected.block.n_kv_heads = c.block.n_kv_heads;
  if (!(expected == c) || (c.block.n_kv_heads != 0 && c.block.n_kv_heads != c.block.n_heads))
    throw ValueError("save_hf_gpt2: the model is not a GPT-2 design (nn::gpt2_config: pre-LN LayerNorm, "
                     "GELU, learned positions, biases, multi-head attention, tied head)");
  HfConfigWriter w;
  w.string("activation_function", c.block.activation == nn::Activation::gelu ? "gelu" : "gelu_new")
      .string_list("architectures", "GPT2LMHeadModel")
      .number("layer_norm_epsilon", c.block.norm_eps)
      .string("model_type", "gpt2")
      .integer("n_embd", c.block.d_model)
      .integer("n_head", c.block.n_heads)
      .integer("n_layer", c.n_layers)
      .integer("n_positions", c.max_seq_len)
      .boolean("tie_word_embeddings", true)
      .integer("vocab_size", c.vocab_size);
  if (c.block.d_ff > 0) w.integer("n_inner", c.block.d_ff);
  return w.text();
}

StateDict gpt2_state_from_hf(const StateDict& hf, const nn::TransformerLMConfig& config, const std::string& source) {
  const StateDict stripped = strip_hf_prefix(hf, "transformer.", source);
  check_tied_head(stripped, "lm_head.weight", "wte.weight", source);
  StateDict rest;  // less the mask buffers and the tied head, which hold no parameter
  for (const auto& [name, t] : stripped)
    if (!is_gpt2_buffer(name) && name != "lm_head.weight") rest.insert(name, t);
  return map_hf_tensors(rest, gpt2_tensors(config), source);
}

StateDict gpt2_state_to_hf(const StateDict& state, const nn::TransformerLMConfig& config) {
  return unmap_hf_tensors(state, gpt2_tensors(config));
}

std::shared_ptr<nn::TransformerLM> load_hf_gpt2(const std::string& dir) {
  const nn::TransformerLMConfig config = gpt2_config_from_hf(HfConfig::load(dir + "/config.json"));
  const std::string weights = dir + "/model.safetensors";
  return make_hf_model(config, gpt2_state_from_hf(load_safetensors(weights).tensors, config, weights));
}

void save_hf_gpt2(const nn::TransformerLM& model, const std::string& dir) {
  const std::string config = gpt2_config_to_hf(model.config);  // refuses a non-GPT-2 first
  save_hf_folder(dir, config, gpt2_state_to_hf(state_dict(model), model.config));
}

}  // namespace tapegrad::io
