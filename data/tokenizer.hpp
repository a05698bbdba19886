// tokenizer.hpp — text <-> token ids. The common Tokenizer interface, the character-level
// tokenizer, and load_tokenizer() which reads any tokenizer file back.
//
// Tokenizers here work on bytes, never on decoded characters: a UTF-8 'é' is two bytes and
// so two character-level tokens, and a text that is not valid UTF-8 is still a valid input.
// That keeps decode(encode(s)) == s true for every byte string.
//
//   auto tok = CharTokenizer::from_text("hello world");   // vocab: " dehlorw" (8 ids)
//   std::vector<TokenId> ids = tok.encode("hello");       // {3, 2, 4, 4, 5}
//   tok.decode(ids) == "hello";
//   tok.save("char.tok");  auto again = load_tokenizer("char.tok");
//
// Files are small versioned text files ("tapegrad-tokenizer 1", see docs/data.md). A damaged
// file throws io::FormatError naming the file and line; a missing one io::IoError.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "../autograd/tensor.hpp"

namespace tapegrad::data {

// A token id. 32 bits: token streams hold hundreds of millions of them.
using TokenId = std::int32_t;

class Tokenizer {
 public:
  virtual ~Tokenizer() = default;

  virtual std::vector<TokenId> encode(std::string_view text) const = 0;
  // Throws ValueError for an id outside [0, vocab_size()).
  virtual std::string decode(std::span<const TokenId> ids) const = 0;
  virtual std::int64_t vocab_size() const = 0;
  // Writes the tokenizer file atomically (io::write_file_atomic).
  virtual void save(const std::string& path) const = 0;
  // "char", "bpe" or "gpt2": the `type` line of the file.
  virtual std::string name() const = 0;

  // encode() as an int64 tensor of shape (1, n): a batch of one row, as a prompt.
  Tensor encode_tensor(std::string_view text) const;
  // decode() of an int64 tensor of any shape, read in row-major order.
  std::string decode_tensor(const Tensor& ids) const;
};

// One token per byte value that occurs in the training text; ids follow byte order.
class CharTokenizer : public Tokenizer {
 public:
  // `bytes`: the vocabulary, strictly increasing (id i decodes to bytes[i]); not empty.
  explicit CharTokenizer(std::vector<unsigned char> bytes);
  // The sorted unique bytes of the texts.
  static CharTokenizer from_text(std::string_view text);
  static CharTokenizer from_texts(std::span<const std::string_view> texts);
  // All 256 byte values: id == byte. Encodes anything.
  static CharTokenizer all_bytes();
  static CharTokenizer load(const std::string& path);

  // Throws ValueError for a byte that is not in the vocabulary (naming it and its offset).
  std::vector<TokenId> encode(std::string_view text) const override;
  std::string decode(std::span<const TokenId> ids) const override;
  std::int64_t vocab_size() const override { return static_cast<std::int64_t>(bytes_.size()); }
  void save(const std::string& path) const override;
  std::string name() const override { return "char"; }

  const std::vector<unsigned char>& bytes() const { return bytes_; }
  // The id of a byte, or -1 when it is not in the vocabulary.
  TokenId id_of(unsigned char byte) const { return id_of_[byte]; }

 private:
  std::vector<unsigned char> bytes_;
  std::array<TokenId, 256> id_of_{};
};

// Reads any tokenizer file written by save(): a CharTokenizer, BpeTokenizer or Gpt2Tokenizer.
std::unique_ptr<Tokenizer> load_tokenizer(const std::string& path);

}  // namespace tapegrad::data
