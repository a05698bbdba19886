// fuzz_load_tokenizer.cpp — libFuzzer target for the tokenizer files of data/ (load_tokenizer:
// "tapegrad-tokenizer 1" with type char, bpe or gpt2), read from memory.
//
// Anything but success or io::FormatError is a finding (an escaping exception aborts). A
// tokenizer that loads must encode and decode a sample text of its own bytes back to itself.
// Built and run by scripts/fuzz.sh; seeds in tests/io/corpus/seeds/tokenizer/.
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <vector>
#include <string>

#include <tapegrad/data/tokenizer.hpp>
#include <tapegrad/data/tokenizer_file.hpp>
#include <tapegrad/io/errors.hpp>

using namespace tapegrad;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::unique_ptr<data::Tokenizer> tok;
  try {
    data::detail::TokenizerFileReader reader(std::string(reinterpret_cast<const char*>(data), size), "fuzz");
    tok = data::detail::read_tokenizer(reader);
  } catch (const io::FormatError&) {
    return 0;
  }
  // The decoded bytes of the first ids: a text every tokenizer type can encode again.
  std::vector<data::TokenId> ids;
  for (data::TokenId id = 0; id < tok->vocab_size() && id < 64; ++id) ids.push_back(id);
  const std::string text = tok->decode(ids);
  if (tok->decode(tok->encode(text)) != text) std::abort();
  return 0;
}
