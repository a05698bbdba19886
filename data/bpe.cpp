// bpe.cpp — byte-level BPE: the pre-tokenizer, incremental training, encoding by merge rank,
// and the tokenizer file.
#include "bpe.hpp"

#include <algorithm>
#include <queue>

#include "../io/file.hpp"
#include "tokenizer_file.hpp"

namespace tapegrad::data {

namespace {

constexpr std::int64_t kMaxVocab = std::int64_t{1} << 24;
// Pairs seen fewer times than this are not worth a token.
constexpr std::int64_t kMinPairCount = 2;

std::uint64_t pair_key(TokenId left, TokenId right) {
  return (static_cast<std::uint64_t>(static_cast<std::uint32_t>(left)) << 32) |
         static_cast<std::uint32_t>(right);
}

enum class ByteClass { letter, digit, punct, space, other_whitespace };

ByteClass class_of(char ch) {
  const auto c = static_cast<unsigned char>(ch);
  if (c >= 0x80 || ((c | 0x20) >= 'a' && (c | 0x20) <= 'z')) return ByteClass::letter;
  if (c >= '0' && c <= '9') return ByteClass::digit;
  if (c == ' ') return ByteClass::space;
  if (c == '\n' || c == '\t' || c == '\r' || c == '\v' || c == '\f') return ByteClass::other_whitespace;
  return ByteClass::punct;
}

bool is_whitespace(ByteClass c) { return c == ByteClass::space || c == ByteClass::other_whitespace; }

// Calls fn(word) for each word of split_words(text), in order, without building a vector.
template <typename Fn>
void for_each_word(std::string_view text, Fn&& fn) {
  const std::size_t n = text.size(), max_len = BpeTokenizer::kMaxWordBytes;
  std::size_t i = 0;
  while (i < n) {
    const std::size_t start = i;
    ByteClass c = class_of(text[i]);
    if (c == ByteClass::space && i + 1 < n && !is_whitespace(class_of(text[i + 1]))) {
      ++i;  // " word": the space leads the word
      c = class_of(text[i]);
    }
    if (!is_whitespace(c)) {
      while (i < n && class_of(text[i]) == c && i - start < max_len) ++i;
    } else {
      std::size_t end = i;
      while (end < n && is_whitespace(class_of(text[end]))) ++end;
      // "  word": the last space goes with the word, as GPT-2's \s+(?!\S).
      if (end < n && end - start > 1 && text[end - 1] == ' ') --end;
      i = std::min(end, start + max_len);
    }
    fn(text.substr(start, i - start));
  }
}

// Max-heap entry: the largest count first, then the smallest pair key (deterministic ties).
struct HeapEntry {
  std::int64_t count;
  std::uint64_t key;
  bool operator<(const HeapEntry& other) const {
    return count != other.count ? count < other.count : key > other.key;
  }
};

}  // namespace

std::vector<std::string_view> BpeTokenizer::split_words(std::string_view text) {
  std::vector<std::string_view> words;
  for_each_word(text, [&](std::string_view word) { words.push_back(word); });
  return words;
}

BpeTokenizer::BpeTokenizer(std::vector<Merge> merges) : merges_(std::move(merges)) {
  token_bytes_.reserve(256 + merges_.size());
  for (int b = 0; b < 256; ++b) token_bytes_.emplace_back(1, static_cast<char>(b));
  for (std::size_t i = 0; i < merges_.size(); ++i) {
    const auto [left, right] = merges_[i];
    const auto limit = static_cast<TokenId>(256 + i);
    if (left < 0 || left >= limit || right < 0 || right >= limit)
      throw ValueError("BpeTokenizer: merge " + std::to_string(i) + " (" + std::to_string(left) +
                       ", " + std::to_string(right) + ") uses an id not created before it (< " +
                       std::to_string(limit) + ")");
    if (!rank_.emplace(pair_key(left, right), static_cast<TokenId>(i)).second)
      throw ValueError("BpeTokenizer: merge " + std::to_string(i) + " (" + std::to_string(left) +
                       ", " + std::to_string(right) + ") repeats an earlier merge");
    token_bytes_.push_back(token_bytes_[left] + token_bytes_[right]);
  }
}

// ---------------------------------------------------------------- training

BpeTokenizer BpeTokenizer::train(std::span<const std::string_view> texts, std::int64_t vocab_size) {
  if (vocab_size < 256 || vocab_size > kMaxVocab)
    throw ValueError("BpeTokenizer::train: vocab_size must be in [256, " + std::to_string(kMaxVocab) +
                     "], got " + std::to_string(vocab_size));

  // 1. Each distinct word once, with its frequency. Sorted, so that nothing depends on hash order.
  std::unordered_map<std::string_view, std::int64_t> word_counts;
  for (std::string_view text : texts)
    for_each_word(text, [&](std::string_view word) {
      if (word.size() >= 2) ++word_counts[word];  // a single byte has no pair to merge
    });
  std::vector<std::pair<std::string_view, std::int64_t>> sorted(word_counts.begin(), word_counts.end());
  std::sort(sorted.begin(), sorted.end());
  std::vector<std::vector<TokenId>> words;  // each word as its current tokens
  std::vector<std::int64_t> freq;
  for (const auto& [word, count] : sorted) {
    words.emplace_back(word.begin(), word.end());
    for (TokenId& t : words.back()) t = static_cast<unsigned char>(t);
    freq.push_back(count);
  }

  // 2. Pair counts over the corpus, and which words contain each pair.
  std::unordered_map<std::uint64_t, std::int64_t> pair_count;
  std::unordered_map<std::uint64_t, std::vector<std::int32_t>> words_with;
  for (std::size_t w = 0; w < words.size(); ++w)
    for (std::size_t i = 0; i + 1 < words[w].size(); ++i) {
      const std::uint64_t key = pair_key(words[w][i], words[w][i + 1]);
      pair_count[key] += freq[w];
      words_with[key].push_back(static_cast<std::int32_t>(w));
    }
  // Lazy max-heap: an entry whose count differs from pair_count is stale and skipped, because
  // every change of a count pushes a fresh entry.
  std::priority_queue<HeapEntry> heap;
  for (const auto& [key, count] : pair_count) heap.push({count, key});

  // 3. Merge the most frequent pair, revisiting only the words that contain it.
  std::vector<Merge> merges;
  std::vector<std::uint64_t> touched;
  while (256 + static_cast<std::int64_t>(merges.size()) < vocab_size && !heap.empty()) {
    const HeapEntry top = heap.top();
    heap.pop();
    const auto found = pair_count.find(top.key);
    if (found == pair_count.end() || found->second != top.count) continue;  // stale
    if (top.count < kMinPairCount) break;
    const auto left = static_cast<TokenId>(top.key >> 32);
    const auto right = static_cast<TokenId>(top.key & 0xffffffffu);
    const auto merged = static_cast<TokenId>(256 + merges.size());
    merges.emplace_back(left, right);

    std::vector<std::int32_t> candidates = std::move(words_with[top.key]);
    words_with.erase(top.key);
    std::sort(candidates.begin(), candidates.end());
    candidates.erase(std::unique(candidates.begin(), candidates.end()), candidates.end());
    touched.clear();
    auto add = [&](std::uint64_t key, std::int64_t delta) {
      pair_count[key] += delta;
      touched.push_back(key);
    };
    for (std::int32_t w : candidates) {
      std::vector<TokenId>& s = words[w];
      const std::int64_t f = freq[w];
      // Take the word's pairs out, merge, put the new pairs in: words are short (<= 64 bytes).
      for (std::size_t i = 0; i + 1 < s.size(); ++i) add(pair_key(s[i], s[i + 1]), -f);
      std::size_t k = 0;
      for (std::size_t i = 0; i < s.size();) {
        if (i + 1 < s.size() && s[i] == left && s[i + 1] == right) {
          s[k++] = merged;
          i += 2;
        } else {
          s[k++] = s[i++];
        }
      }
      s.resize(k);
      for (std::size_t i = 0; i + 1 < s.size(); ++i) {
        const std::uint64_t key = pair_key(s[i], s[i + 1]);
        add(key, f);
        // Only pairs with the new token are new to this word; the others already list it.
        if (s[i] == merged || s[i + 1] == merged) words_with[key].push_back(w);
      }
    }
    std::sort(touched.begin(), touched.end());
    touched.erase(std::unique(touched.begin(), touched.end()), touched.end());
    for (std::uint64_t key : touched) {
      const auto it = pair_count.find(key);
      if (it->second > 0) {
        heap.push({it->second, key});
      } else {
        pair_count.erase(it);
        words_with.erase(key);
      }
    }
  }
  return BpeTokenizer(std::move(merges));
}

BpeTokenizer BpeTokenizer::train(std::string_view text, std::int64_t vocab_size) {
  return train(std::span<const std::string_view>(&text, 1), vocab_size);
}

// ---------------------------------------------------------------- encode / decode

void BpeTokenizer::encode_word(std::string_view word, std::vector<TokenId>& out) const {
  std::vector<TokenId> s(word.begin(), word.end());
  for (TokenId& t : s) t = static_cast<unsigned char>(t);
  // Apply the earliest-learned merge present, everywhere in the word, until none applies.
  while (s.size() >= 2) {
    TokenId best = -1;
    for (std::size_t i = 0; i + 1 < s.size(); ++i) {
      const auto it = rank_.find(pair_key(s[i], s[i + 1]));
      if (it != rank_.end() && (best < 0 || it->second < best)) best = it->second;
    }
    if (best < 0) break;
    const auto [left, right] = merges_[static_cast<std::size_t>(best)];
    std::size_t k = 0;
    for (std::size_t i = 0; i < s.size();) {
      if (i + 1 < s.size() && s[i] == left && s[i + 1] == right) {
        s[k++] = 256 + best;
        i += 2;
      } else {
        s[k++] = s[i++];
      }
    }
    s.resize(k);
  }
  out.insert(out.end(), s.begin(), s.end());
}

std::vector<TokenId> BpeTokenizer::encode(std::string_view text) const {
  std::vector<TokenId> ids;
  ids.reserve(text.size() / 3);
  // Words repeat a lot in real text: remember each word's tokens for the length of this call.
  constexpr std::size_t kMaxCachedWords = std::size_t{1} << 18;
  std::unordered_map<std::string_view, std::vector<TokenId>> cache;
  std::vector<TokenId> word_ids;
  for_each_word(text, [&](std::string_view word) {
    if (word.size() == 1) {
      ids.push_back(static_cast<unsigned char>(word[0]));
      return;
    }
    if (const auto it = cache.find(word); it != cache.end()) {
      ids.insert(ids.end(), it->second.begin(), it->second.end());
      return;
    }
    word_ids.clear();
    encode_word(word, word_ids);
    ids.insert(ids.end(), word_ids.begin(), word_ids.end());
    if (cache.size() < kMaxCachedWords) cache.emplace(word, word_ids);
  });
  return ids;
}

const std::string& BpeTokenizer::token_bytes(TokenId id) const {
  if (id < 0 || id >= vocab_size())
    throw ValueError("BpeTokenizer: id " + std::to_string(id) + " is outside the vocabulary [0, " +
                     std::to_string(vocab_size()) + ")");
  return token_bytes_[static_cast<std::size_t>(id)];
}

std::string BpeTokenizer::decode(std::span<const TokenId> ids) const {
  std::string text;
  for (std::size_t i = 0; i < ids.size(); ++i) {
    if (ids[i] < 0 || ids[i] >= vocab_size())
      throw ValueError("BpeTokenizer.decode: id " + std::to_string(ids[i]) + " at position " +
                       std::to_string(i) + " is outside the vocabulary [0, " +
                       std::to_string(vocab_size()) + ")");
    text += token_bytes_[static_cast<std::size_t>(ids[i])];
  }
  return text;
}

// ---------------------------------------------------------------- file

// Format: header, "pretokenizer 1" (the split_words rule), "merges N", N lines "left right".
void BpeTokenizer::save(const std::string& path) const {
  std::string out = detail::tokenizer_file_header("bpe");
  out += "pretokenizer 1\nmerges " + std::to_string(merges_.size()) + "\n";
  for (const auto& [left, right] : merges_) out += std::to_string(left) + " " + std::to_string(right) + "\n";
  out += "end\n";
  io::write_file_atomic(path, out);
}

BpeTokenizer detail::read_bpe_body(TokenizerFileReader& reader) {
  reader.keyed_int("pretokenizer", 1, 1);
  const std::int64_t n = reader.keyed_int("merges", 0, kMaxVocab - 256);
  std::vector<BpeTokenizer::Merge> merges;
  std::unordered_map<std::uint64_t, std::int64_t> seen;
  for (std::int64_t i = 0; i < n; ++i) {
    const auto f = reader.fields(2);
    // A merge may only use the bytes and the tokens made by earlier merges.
    const auto left = static_cast<TokenId>(reader.to_int(f[0], 0, 255 + i));
    const auto right = static_cast<TokenId>(reader.to_int(f[1], 0, 255 + i));
    if (const auto [it, inserted] = seen.emplace(pair_key(left, right), i); !inserted)
      reader.fail("merge " + std::to_string(i) + " repeats merge " + std::to_string(it->second));
    merges.emplace_back(left, right);
  }
  reader.expect_end();
  return BpeTokenizer(std::move(merges));
}

BpeTokenizer BpeTokenizer::load(const std::string& path) {
  detail::TokenizerFileReader reader(path);
  const std::string type = reader.read_type();
  if (type != "bpe")
    reader.fail("this is a '" + type + "' tokenizer, not a bpe tokenizer (use load_tokenizer)");
  return detail::read_bpe_body(reader);
}

}  // namespace tapegrad::data
