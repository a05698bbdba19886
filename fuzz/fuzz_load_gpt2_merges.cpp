// fuzz_load_gpt2_merges.cpp — libFuzzer target for GPT-2's merges.txt loader
// (data::Gpt2Tokenizer::from_strings with the vocab.json of tests/reference/gpt2_bpe/).
//
// Anything but success or io::FormatError is a finding (an escaping exception aborts). Merges
// that load must encode and decode a sample text back to itself. Built and run by
// scripts/fuzz.sh from the repository root; seeds in tests/io/corpus/seeds/gpt2_merges/.
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <string_view>

#include <tapegrad/data/gpt2_tokenizer.hpp>
#include <tapegrad/io/errors.hpp>
#include <tapegrad/io/file.hpp>

using namespace tapegrad;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const std::string vocab = io::read_file("tests/reference/gpt2_bpe/vocab.json");
  std::optional<data::Gpt2Tokenizer> tok;
  try {
    tok.emplace(data::Gpt2Tokenizer::from_strings(
        vocab, std::string_view(reinterpret_cast<const char*>(data), size), "vocab.json", "fuzz merges.txt"));
  } catch (const io::FormatError&) {
    return 0;
  }
  const std::string_view sample = "The lazy dog's café in Москва had 1234567890 visitors 😀 \xff";
  if (tok->decode(tok->encode(sample)) != sample) std::abort();
  return 0;
}
