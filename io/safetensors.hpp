// safetensors.hpp — weights in the safetensors format, to move them to and from PyTorch and
// the Hugging Face ecosystem (https://github.com/huggingface/safetensors):
//
//   u64 N (little-endian) | N bytes of JSON header | raw little-endian tensor bytes
//   header: {"__metadata__": {"format": "pt"},
//            "0.weight": {"dtype": "F32", "shape": [4, 3], "data_offsets": [0, 48]}, ...}
//
// data_offsets are [begin, end) byte offsets into the data after the header. tapegrad reads
// and writes the dtypes F32, F64 and I64. It also reads F16 and BF16, the dtypes of most Hugging
// Face checkpoints, widening them exactly to float32 tensors, and on request writes float32
// tensors as F16 or BF16, rounded to nearest even (io/half.hpp); the names are state_dict() names, which are
// PyTorch's for the same model structure. Python reads the files with
// safetensors.torch.load_file (tests/reference/make_safetensors_reference.py does it by hand).
//
// The reader is strict and bounded, like the Rust reference implementation: the header must
// be valid JSON starting with '{' and at most 16 MiB, every tensor's byte range must match its
// shape and dtype, and the ranges must tile the data exactly (no gap, no overlap, nothing left
// over). Everything is checked before any tensor is allocated; bad input throws FormatError.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "errors.hpp"
#include "state_dict.hpp"

namespace tapegrad::io {

// The optional "__metadata__" string -> string map, in order.
using SafetensorsMetadata = std::vector<std::pair<std::string, std::string>>;

struct SafetensorsFile {
  StateDict tensors;  // in the order of their data in the file
  SafetensorsMetadata metadata;
};

// The bytes of a safetensors file: header keys in state-dict order ("__metadata__" first, and
// only when not empty), compact JSON, padded with spaces to a multiple of 8 bytes, then the
// tensors' bytes in the same order. Throws ValueError (bad or reserved name, duplicate
// metadata key) or DTypeError.
// float32_as: how float32 tensors are stored (F32 exactly, or rounded to F16/BF16); the other
// dtypes are always stored as they are.
enum class SafetensorsFloat : std::uint8_t { f32, f16, bf16 };
std::string encode_safetensors(const StateDict& state, const SafetensorsMetadata& metadata = {},
                               SafetensorsFloat float32_as = SafetensorsFloat::f32);
SafetensorsFile decode_safetensors(std::string_view bytes, const std::string& source = "<memory>");

// encode + write_file_atomic; read_file + decode.
void save_safetensors(const StateDict& state, const std::string& path, const SafetensorsMetadata& metadata = {},
                      SafetensorsFloat float32_as = SafetensorsFloat::f32);
SafetensorsFile load_safetensors(const std::string& path);

}  // namespace tapegrad::io
