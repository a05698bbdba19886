// io.hpp — saving and loading: state dicts, checkpoints (binary or JSON), safetensors.
//
//   #include <tapegrad/io/io.hpp>
//   tapegrad::io::save_module(model, "model.tgc");
//   tapegrad::io::load_module(model, "model.tgc");
#pragma once

#include "checkpoint.hpp"
#include "checksum.hpp"
#include "errors.hpp"
#include "file.hpp"
#include "safetensors.hpp"
#include "state_dict.hpp"
