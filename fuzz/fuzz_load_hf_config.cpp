// fuzz_load_hf_config.cpp — libFuzzer target for the Hugging Face config.json readers
// (io::HfConfig, io::gpt2_config_from_hf, io::llama_config_from_hf).
//
// Anything but success or io::FormatError is a finding (an escaping exception aborts). A
// config that reads must be written back (gpt2_config_to_hf / llama_config_to_hf) and read
// again to the same TransformerLMConfig. No model is built: the sizes are only checked, the
// tensors of a real load are what bound the allocation. Built and run by scripts/fuzz.sh.
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include <tapegrad/io/io.hpp>

using namespace tapegrad;

namespace {

template <typename From, typename To>
void check(const io::HfConfig& hf, From from, To to) {
  nn::TransformerLMConfig c;
  try {
    c = from(hf);
  } catch (const io::FormatError&) {
    return;
  }
  const std::string text = to(c);
  if (!(from(io::HfConfig::parse(text, "again")) == c)) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  io::HfConfig hf;
  try {
    hf = io::HfConfig::parse(std::string_view(reinterpret_cast<const char*>(data), size), "fuzz");
  } catch (const io::FormatError&) {
    return 0;
  }
  check(hf, io::gpt2_config_from_hf, io::gpt2_config_to_hf);
  check(hf, io::llama_config_from_hf, io::llama_config_to_hf);
  return 0;
}
