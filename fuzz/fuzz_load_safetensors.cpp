// fuzz_load_safetensors.cpp — libFuzzer target for io::decode_safetensors (and so for the
// JSON parser of io/json.hpp).
//
// Anything but success or io::FormatError is a finding (an escaping exception aborts). A file
// that loads must re-encode, and decode again to the same tensors and metadata. Built and run
// by scripts/fuzz.sh.
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string_view>

#include <tapegrad/io/io.hpp>

using namespace tapegrad;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  io::SafetensorsFile file;
  try {
    file = io::decode_safetensors(std::string_view(reinterpret_cast<const char*>(data), size), "fuzz");
  } catch (const io::FormatError&) {
    return 0;
  }
  const io::SafetensorsFile again = io::decode_safetensors(io::encode_safetensors(file.tensors, file.metadata));
  if (again.metadata != file.metadata || again.tensors.size() != file.tensors.size()) std::abort();
  for (std::size_t i = 0; i < file.tensors.size(); ++i) {
    const auto& [na, ta] = file.tensors.items()[i];
    const auto& [nb, tb] = again.tensors.items()[i];
    if (na != nb || ta.dtype() != tb.dtype() || ta.shape() != tb.shape()) std::abort();
    const std::size_t n = static_cast<std::size_t>(ta.numel()) * size_of(ta.dtype());
    if (std::memcmp(ta.raw_data(), tb.raw_data(), n) != 0) std::abort();
  }
  return 0;
}
