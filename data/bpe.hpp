// bpe.hpp — byte-level byte-pair encoding (Sennrich et al. 2016, "Neural Machine Translation
// of Rare Words with Subword Units", https://arxiv.org/abs/1508.07909; byte-level as GPT-2).
//
// The vocabulary starts with the 256 byte values (id == byte). Training repeatedly merges the
// most frequent adjacent pair of tokens into a new token (id 256, 257, ...) until vocab_size
// is reached or no pair occurs twice. Merges never cross word boundaries: the text is first
// split into words by split_words (below). Encoding replays the merges in the order they were
// learned; decoding concatenates each token's bytes, so decode(encode(s)) == s for any bytes.
//
//   auto bpe = BpeTokenizer::train(text, /*vocab_size=*/512);
//   std::vector<TokenId> ids = bpe.encode("the licensee");   // fewer ids than bytes
//   bpe.save("bpe.tok");   // "tapegrad-tokenizer 1", "type bpe", one merge per line
//
// Training keeps pair counts up to date incrementally (only the words that contain the merged
// pair are revisited), with a lazy max-heap to pick the next pair: ~0.03 s for 1 MB of text.
#pragma once

#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "tokenizer.hpp"

namespace tapegrad::data {

class BpeTokenizer : public Tokenizer {
 public:
  // A merge (left, right) -> new token; the i-th merge creates id 256 + i.
  using Merge = std::pair<TokenId, TokenId>;

  // Words are split at this many bytes at most (keeps encoding linear on pathological input).
  static constexpr std::size_t kMaxWordBytes = 64;

  // From learned merges. Throws ValueError if a merge uses an id not created before it, or
  // repeats an earlier merge.
  explicit BpeTokenizer(std::vector<Merge> merges = {});

  // Learns merges until vocab_size tokens (>= 256) or until no pair occurs at least twice,
  // so the result may be smaller than asked. The texts are trained as if concatenated, each
  // split into words on its own. Deterministic: ties go to the smallest (left, right) ids.
  static BpeTokenizer train(std::span<const std::string_view> texts, std::int64_t vocab_size);
  static BpeTokenizer train(std::string_view text, std::int64_t vocab_size);
  static BpeTokenizer load(const std::string& path);

  std::vector<TokenId> encode(std::string_view text) const override;
  std::string decode(std::span<const TokenId> ids) const override;
  std::int64_t vocab_size() const override { return static_cast<std::int64_t>(token_bytes_.size()); }
  void save(const std::string& path) const override;
  std::string name() const override { return "bpe"; }

  const std::vector<Merge>& merges() const { return merges_; }
  // The bytes a token stands for.
  const std::string& token_bytes(TokenId id) const;

  // The pre-tokenizer, GPT-2's rule on byte classes: a word is an optional single space
  // followed by a run of letters (ASCII letters and every byte >= 0x80, so UTF-8 letters
  // stay together), or of digits, or of other punctuation; whitespace runs are words of their
  // own, except that the last space before a non-space joins the next word. Runs longer than
  // kMaxWordBytes are cut. The words concatenate back to `text`.
  static std::vector<std::string_view> split_words(std::string_view text);

 private:
  void encode_word(std::string_view word, std::vector<TokenId>& out) const;

  std::vector<Merge> merges_;
  std::vector<std::string> token_bytes_;              // id -> bytes
  std::unordered_map<std::uint64_t, TokenId> rank_;   // pair key -> merge index
};

}  // namespace tapegrad::data
