// hf_tensors.hpp — the table-driven part of the Hugging Face importers: a checkpoint's tensors,
// renamed and (for GPT-2's Conv1D) transposed into a tapegrad state dict, every tensor checked
// first, and the way back. Each format (hf_gpt2.cpp, hf_llama.cpp) only lists its table.
#pragma once

#include <string>
#include <vector>

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

}  // namespace tapegrad::io
