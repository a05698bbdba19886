// gpt2_tokenizer.hpp — GPT-2's byte-level BPE tokenizer, read from the vocab.json and
// merges.txt files GPT-2 and its descendants ship (Radford et al. 2019, "Language Models are
// Unsupervised Multitask Learners"; the algorithm of openai/gpt-2 src/encoder.py).
//
//   auto tok = Gpt2Tokenizer::from_files("vocab.json", "merges.txt");
//   std::vector<TokenId> ids = tok.encode("Hello world");   // GPT-2's own vocab: {15496, 995}
//   tok.decode(ids) == "Hello world";
//   tok.save("gpt2.tok");   // a tapegrad tokenizer file: load_tokenizer() reads it back
//
// encode: the text is cut by GPT-2's pattern (gpt2_pretokenize.hpp); each piece starts as
// one token per byte and encoder.py's bpe() repeatedly merges the adjacent pair with the
// lowest rank (its line in merges.txt) until no adjacent pair is a merge. decode
// concatenates the tokens' bytes, so decode(encode(s)) == s for any bytes; bytes that are
// not UTF-8 come back as they are. Not here: special tokens (<|endoftext|> is encoded as
// plain text, as encoder.py does) and HF tokenizer.json files.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "tokenizer.hpp"

namespace tapegrad::data {

class Gpt2Tokenizer : public Tokenizer {
 public:
  // A merge (left, right) of two token ids; its rank is its index in merges().
  using Merge = std::pair<TokenId, TokenId>;

  // tokens[id] = the bytes of token `id`. Each must be non-empty and unique, and all 256
  // single bytes must be tokens (so that any text can be encoded). Throws ValueError.
  explicit Gpt2Tokenizer(std::vector<std::string> tokens);

  // Reads GPT-2's files. Throws io::IoError when a file cannot be read and io::FormatError
  // naming the file and the entry or line for anything malformed: bad JSON, a value that is
  // not an integer id, ids out of range or repeated, a key outside GPT-2's byte alphabet, a
  // merges line that is not "a b", a merge of an unknown token or whose result is not in
  // the vocabulary, a repeated merge.
  static Gpt2Tokenizer from_files(const std::string& vocab_json_path,
                                  const std::string& merges_txt_path);
  // The same from the files' contents; the sources name them in error messages.
  static Gpt2Tokenizer from_strings(std::string_view vocab_json, std::string_view merges_txt,
                                    const std::string& vocab_source = "vocab.json",
                                    const std::string& merges_source = "merges.txt");
  static Gpt2Tokenizer load(const std::string& path);

  // Appends a merge with the next rank. Throws ValueError when an id is out of range, the
  // pair is already a merge, or the concatenated bytes are not a token.
  void add_merge(TokenId left, TokenId right);

  std::vector<TokenId> encode(std::string_view text) const override;
  std::string decode(std::span<const TokenId> ids) const override;
  std::int64_t vocab_size() const override { return static_cast<std::int64_t>(tokens_.size()); }
  void save(const std::string& path) const override;
  std::string name() const override { return "gpt2"; }

  const std::vector<Merge>& merges() const { return merges_; }
  const std::string& token_bytes(TokenId id) const;
  // The id of the token spelled `bytes`, or -1.
  TokenId id_of(std::string_view bytes) const;
  // encoder.py's bpe() on one pre-tokenized piece, appending the ids to `out`.
  void encode_piece(std::string_view piece, std::vector<TokenId>& out) const;

 private:
  struct Rule {
    std::int32_t rank;
    TokenId merged;
  };
  std::vector<std::string> tokens_;                 // id -> bytes
  std::unordered_map<std::string, TokenId> ids_;    // bytes -> id
  std::vector<Merge> merges_;                       // rank -> pair
  std::unordered_map<std::uint64_t, Rule> rules_;   // pair key -> rank and merged id
};

}  // namespace tapegrad::data
