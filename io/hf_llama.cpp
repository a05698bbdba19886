// hf_llama.cpp — the LLaMA name mapping of hf_llama.hpp, and its folder I/O.
#include "hf_llama.hpp"

#include "../autograd/ops.hpp"
#include "../nn/presets.hpp"
#include "errors.hpp"
#include "file.hpp"
#include "hf_tensors.hpp"
#include "safetensors.hpp"

namespace tapegrad::io {

namespace {

std::string layer(std::int64_t l) { return "blocks." + std::to_string(l) + "."; }

// q, k and v are separate in Hugging Face's files and one fused qkv in tapegrad: the table maps
// them to the stand-in names <block>attn.q/k/v, which fuse() and split() join and undo.
std::vector<HfTensor> llama_tensors(const nn::TransformerLMConfig& c) {
  const std::int64_t C = c.block.d_model, F = c.block.ff_dim(), V = c.vocab_size;
  const std::int64_t H = c.block.n_heads, KV = c.block.n_kv_heads > 0 ? c.block.n_kv_heads : H;
  const std::int64_t Ckv = KV * (C / H);
  std::vector<HfTensor> t = {{"model.embed_tokens.weight", "tok_emb.weight", {V, C}, false}};
  for (std::int64_t l = 0; l < c.n_layers; ++l) {
    const std::string h = "model.layers." + std::to_string(l) + ".", b = layer(l);
    const std::vector<HfTensor> rows = {
        {h + "input_layernorm.weight", b + "attn_residual.norm.weight", {C}, false},
        {h + "self_attn.q_proj.weight", b + "attn.q", {C, C}, false},
        {h + "self_attn.k_proj.weight", b + "attn.k", {Ckv, C}, false},
        {h + "self_attn.v_proj.weight", b + "attn.v", {Ckv, C}, false},
        {h + "self_attn.o_proj.weight", b + "attn.out_proj.weight", {C, C}, false},
        {h + "post_attention_layernorm.weight", b + "ffn_residual.norm.weight", {C}, false},
        {h + "mlp.gate_proj.weight", b + "ffn.fc1.weight", {F, C}, false},
        {h + "mlp.up_proj.weight", b + "ffn.fc_gate.weight", {F, C}, false},
        {h + "mlp.down_proj.weight", b + "ffn.fc2.weight", {C, F}, false},
    };
    t.insert(t.end(), rows.begin(), rows.end());
  }
  t.push_back({"model.norm.weight", "final_norm.weight", {C}, false});
  if (!c.tie_weights) t.push_back({"lm_head.weight", "lm_head.weight", {V, C}, false});
  return t;
}

// The stand-ins attn.q, attn.k, attn.v -> attn.qkv.weight (rows q | k | v), in place of q.
StateDict fuse(const StateDict& in) {
  StateDict out;
  for (const auto& [name, t] : in) {
    const std::size_t n = name.size();
    if (n > 7 && name.compare(n - 7, 7, ".attn.q") == 0) {
      const std::string b = name.substr(0, n - 1);
      out.insert(b + "qkv.weight", cat({t, in.at(b + "k"), in.at(b + "v")}, 0));
    } else if (!(n > 7 && (name.compare(n - 7, 7, ".attn.k") == 0 || name.compare(n - 7, 7, ".attn.v") == 0))) {
      out.insert(name, t);
    }
  }
  return out;
}

// attn.qkv.weight -> the stand-ins attn.q, attn.k, attn.v.
StateDict split(const StateDict& in, const nn::TransformerLMConfig& c) {
  const std::int64_t C = c.block.d_model, H = c.block.n_heads;
  const std::int64_t Ckv = (c.block.n_kv_heads > 0 ? c.block.n_kv_heads : H) * (C / H);
  StateDict out;
  for (const auto& [name, t] : in) {
    const std::string suffix = "attn.qkv.weight";
    if (name.size() > suffix.size() && name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0) {
      if (t.dim() != 2 || t.shape()[0] != C + 2 * Ckv)
        throw ValueError("save_hf_llama: " + name + " has shape " + shape_str(t.shape()));
      const std::string b = name.substr(0, name.size() - 10);  // "...attn."
      out.insert(b + "q", narrow(t, 0, 0, C).contiguous());
      out.insert(b + "k", narrow(t, 0, C, Ckv).contiguous());
      out.insert(b + "v", narrow(t, 0, C + Ckv, Ckv).contiguous());
    } else {
      out.insert(name, t);
    }
  }
  return out;
}

}  // namespace

nn::TransformerLMConfig llama_config_from_hf(const HfConfig& hf) {
  const std::string& src = hf.source();
  const std::string type = hf.string_or("model_type", "llama");
  if (type != "llama") throw FormatError(src + ": model_type is \"" + type + "\", not \"llama\"");
  nn::ModelShape shape;
  shape.d_model = hf.size("hidden_size");
  shape.n_layers = hf.size("num_hidden_layers");
  shape.n_heads = hf.size("num_attention_heads");
  shape.n_kv_heads = hf.size_or("num_key_value_heads", shape.n_heads);
  shape.vocab_size = hf.size("vocab_size");
  shape.max_seq_len = hf.size("max_position_embeddings");
  nn::TransformerLMConfig c = nn::llama_config(shape);
  c.block.d_ff = hf.size("intermediate_size");
  c.block.norm_eps = hf.positive_number_or("rms_norm_eps", 1e-6);
  c.block.rope_theta = hf.positive_number_or("rope_theta", 10000.0);
  c.tie_weights = hf.boolean_or("tie_word_embeddings", false);
  const std::string act = hf.string_or("hidden_act", "silu");
  if (act != "silu") throw FormatError(src + ": hidden_act \"" + act + "\": tapegrad's LLaMA FFN is SwiGLU (silu)");
  if (hf.has("rope_scaling")) throw FormatError(src + ": rope_scaling is not supported (tapegrad's RoPE is unscaled)");
  if (hf.boolean_or("attention_bias", false)) throw FormatError(src + ": attention_bias true is not supported");
  if (hf.boolean_or("mlp_bias", false)) throw FormatError(src + ": mlp_bias true is not supported");
  if (hf.has("head_dim") && hf.size("head_dim") * shape.n_heads != shape.d_model)
    throw FormatError(src + ": head_dim must be hidden_size / num_attention_heads");
  return validated_hf_config(c, src);
}

std::string llama_config_to_hf(const nn::TransformerLMConfig& c) {
  const std::int64_t kv = c.block.n_kv_heads > 0 ? c.block.n_kv_heads : c.block.n_heads;
  refuse_stream_without_hf(c, "save_hf_llama");
  nn::TransformerLMConfig expected = with_eval_neutral_settings(
      nn::llama_config({c.vocab_size, c.max_seq_len, c.n_layers, c.block.d_model, c.block.n_heads, c.block.n_kv_heads}), c);
  expected.block.d_ff = c.block.d_ff;
  expected.block.norm_eps = c.block.norm_eps;
  expected.block.rope_theta = c.block.rope_theta;
  expected.tie_weights = c.tie_weights;
  if (!(expected == c))
    throw ValueError("save_hf_llama: the model is not a LLaMA design (nn::llama_config: pre-RMSNorm, SwiGLU, "
                     "rotate_half RoPE, no biases)");
  HfConfigWriter w;
  w.string_list("architectures", "LlamaForCausalLM")
      .string("hidden_act", "silu")
      .integer("hidden_size", c.block.d_model)
      .integer("intermediate_size", c.block.ff_dim())
      .integer("max_position_embeddings", c.max_seq_len)
      .string("model_type", "llama")
      .integer("num_attention_heads", c.block.n_heads)
      .integer("num_hidden_layers", c.n_layers)
      .integer("num_key_value_heads", kv)
      .number("rms_norm_eps", c.block.norm_eps)
      .number("rope_theta", c.block.rope_theta)
      .boolean("tie_word_embeddings", c.tie_weights)
      .integer("vocab_size", c.vocab_size);
  return w.text();
}

StateDict llama_state_from_hf(const StateDict& hf, const nn::TransformerLMConfig& config, const std::string& source) {
  if (!config.tie_weights) return fuse(map_hf_tensors(hf, llama_tensors(config), source));
  check_tied_head(hf, "lm_head.weight", "model.embed_tokens.weight", source);  // tied: the embedding, saved twice
  StateDict rest;
  for (const auto& [name, t] : hf)
    if (name != "lm_head.weight") rest.insert(name, t);
  return fuse(map_hf_tensors(rest, llama_tensors(config), source));
}

StateDict llama_state_to_hf(const StateDict& state, const nn::TransformerLMConfig& config) {
  return unmap_hf_tensors(split(state, config), llama_tensors(config));
}

std::shared_ptr<nn::TransformerLM> load_hf_llama(const std::string& dir) {
  const nn::TransformerLMConfig config = llama_config_from_hf(HfConfig::load(dir + "/config.json"));
  const std::string weights = dir + "/model.safetensors";
  return make_hf_model(config, llama_state_from_hf(load_safetensors(weights).tensors, config, weights));
}

void save_hf_llama(const nn::TransformerLM& model, const std::string& dir) {
  const std::string config = llama_config_to_hf(model.config);  // refuses a non-LLaMA first
  save_hf_folder(dir, config, llama_state_to_hf(state_dict(model), model.config));
}

}  // namespace tapegrad::io
