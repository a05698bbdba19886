// hf_tensors.hpp — the table-driven part of the Hugging Face importers: a checkpoint's tensors,
// renamed and (for GPT-2's Conv1D) transposed into a tapegrad state dict, every tensor checked
// first, and the way back. Each format (hf_gpt2.cpp, hf_llama.cpp) only lists its table.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "../nn/transformer_lm.hpp"
#include "state_dict.hpp"

namespace tapegrad::io {

struct HfTensor {
  std::string hf_name;  // "h.0.attn.c_attn.weight"
  std::string name;     // tapegrad's: "blocks.0.attn.qkv.weight"
  Shape shape;          // tapegrad's shape; the file's is reversed when transposed
  bool transposed = false;
};

// Names starting with `prefix` ("transformer.") lose it; FormatError when two names then clash.
StateDict strip_hf_prefix(const StateDict& hf, const std::string& prefix, const std::string& source);
// hf holds exactly the table's tensors, float32, of the table's shapes -> tapegrad's state dict
// in table order. FormatError naming source, the tensor, and both shapes otherwise.
StateDict map_hf_tensors(const StateDict& hf, const std::vector<HfTensor>& table, const std::string& source);
// tapegrad's state dict -> the table's Hugging Face tensors, float32, contiguous, in table order.
StateDict unmap_hf_tensors(const StateDict& state, const std::vector<HfTensor>& table);

// The pieces both formats share around their tables:
// c after validate(), or FormatError("<source>: the config does not make a model: ...").
nn::TransformerLMConfig validated_hf_config(const nn::TransformerLMConfig& c, const std::string& source);
// A tied checkpoint may store the head again: hf[head], if present, must equal hf[embedding].
void check_tied_head(const StateDict& hf, const std::string& head, const std::string& embedding,
                     const std::string& source);
// ValueError from `op` (save_hf_gpt2, ...) naming the model's stream scheme and why, when
// Hugging Face's layouts have no equivalent of it (nn::StreamInfo::hf_equivalent).
void refuse_stream_without_hf(const nn::TransformerLMConfig& c, const std::string& op);
// `preset` with the settings of `model` that change nothing in eval mode or in the file
// (dropout, dtype, init, causal): `model` is of the preset's design iff the two are equal.
nn::TransformerLMConfig with_eval_neutral_settings(nn::TransformerLMConfig preset, const nn::TransformerLMConfig& model);
// The model of `config` with `state` loaded (strict), in eval mode.
std::shared_ptr<nn::TransformerLM> make_hf_model(const nn::TransformerLMConfig& config, const StateDict& state);
// dir/config.json and dir/model.safetensors, the latter with save_pretrained's metadata
// {"format": "pt"} (transformers refuses a file without a known "format").
void save_hf_folder(const std::string& dir, const std::string& config_json, const StateDict& hf);

}  // namespace tapegrad::io
