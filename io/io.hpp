// io.hpp — saving and loading: state dicts, checkpoints (binary or JSON), safetensors.
//
//   #include <tapegrad/io/io.hpp>
//   tapegrad::io::save_module(model, "model.tgc");
//   tapegrad::io::load_module(model, "model.tgc");
//   auto lm = tapegrad::io::load_model<nn::TransformerLM>("lm.tgc");   // rebuilt from the file alone
#pragma once

#include "checkpoint.hpp"
#include "checksum.hpp"
#include "errors.hpp"
#include "file.hpp"
#include "half.hpp"
#include "hf_config.hpp"
#include "hf_gpt2.hpp"
#include "hf_llama.hpp"
#include "hf_model.hpp"
#include "model_config.hpp"
#include "safetensors.hpp"
#include "state_dict.hpp"
