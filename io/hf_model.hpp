// hf_model.hpp — a Hugging Face model folder of either supported design, chosen by the
// "model_type" of its config.json ("gpt2": hf_gpt2.hpp, "llama": hf_llama.hpp).
#pragma once

#include <memory>
#include <string>

#include "../nn/transformer_lm.hpp"

namespace tapegrad::io {

// dir/config.json + dir/model.safetensors -> a model in eval mode; FormatError naming the
// model_type when it is neither (or missing).
std::shared_ptr<nn::TransformerLM> load_hf_model(const std::string& dir);

}  // namespace tapegrad::io
