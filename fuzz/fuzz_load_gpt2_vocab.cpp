// fuzz_load_gpt2_vocab.cpp — libFuzzer target for GPT-2's vocab.json loader
// (data::Gpt2Tokenizer::from_strings with no merges; the JSON parser of io/json.hpp below it).
//
// Anything but success or io::FormatError is a finding (an escaping exception aborts). A
// vocabulary that loads must encode and decode a sample text back to itself. Built and run
// by scripts/fuzz.sh; seeds in tests/io/corpus/seeds/gpt2_vocab/.
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <string_view>

#include <tapegrad/data/gpt2_tokenizer.hpp>
#include <tapegrad/io/errors.hpp>

using namespace tapegrad;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::optional<data::Gpt2Tokenizer> tok;
  try {
    tok.emplace(data::Gpt2Tokenizer::from_strings(
        std::string_view(reinterpret_cast<const char*>(data), size), "", "fuzz vocab.json", "merges.txt"));
  } catch (const io::FormatError&) {
    return 0;
  }
  const std::string_view sample = "Héllo, wörld! 123 \xff";
  if (tok->decode(tok->encode(sample)) != sample) std::abort();
  return 0;
}
