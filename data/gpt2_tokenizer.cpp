// gpt2_tokenizer.cpp — GPT-2's byte-level BPE (encoder.py's bpe(), encode, decode), its
// vocab.json / merges.txt loaders and its tapegrad tokenizer file ("type gpt2").
#include "gpt2_tokenizer.hpp"

#include <algorithm>
#include <limits>
#include <optional>

#include "../io/errors.hpp"
#include "../io/file.hpp"
#include "../io/json.hpp"
#include "byte_level.hpp"
#include "gpt2_pretokenize.hpp"
#include "tokenizer_file.hpp"

namespace tapegrad::data {

namespace {

// Far above GPT-2's 50257 tokens and 50000 merges; keeps a hostile file's claims bounded.
constexpr std::int64_t kMaxTokens = 1 << 20;

std::uint64_t pair_key(TokenId left, TokenId right) {
  return (static_cast<std::uint64_t>(static_cast<std::uint32_t>(left)) << 32) |
         static_cast<std::uint32_t>(right);
}

// A token or line for an error message: at most 40 bytes, control bytes as '?'.
std::string printable(std::string_view text) {
  std::string out(text.substr(0, 40));
  for (char& c : out)
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = '?';
  return text.size() > 40 ? out + "..." : out;
}

std::string to_hex(std::string_view bytes) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out;
  for (unsigned char b : bytes) {
    out += kDigits[b >> 4];
    out += kDigits[b & 15];
  }
  return out;
}

int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return -1;
}

}  // namespace

// ---------------------------------------------------------------- vocabulary and merges

Gpt2Tokenizer::Gpt2Tokenizer(std::vector<std::string> tokens) : tokens_(std::move(tokens)) {
  if (static_cast<std::int64_t>(tokens_.size()) > kMaxTokens)
    throw ValueError("GPT-2 tokenizer: " + std::to_string(tokens_.size()) +
                     " tokens, more than the limit of " + std::to_string(kMaxTokens));
  ids_.reserve(tokens_.size());
  for (std::size_t id = 0; id < tokens_.size(); ++id) {
    if (tokens_[id].empty()) throw ValueError("GPT-2 tokenizer: token " + std::to_string(id) + " is empty");
    const auto [it, inserted] = ids_.emplace(tokens_[id], static_cast<TokenId>(id));
    if (!inserted)
      throw ValueError("GPT-2 tokenizer: tokens " + std::to_string(it->second) + " and " +
                       std::to_string(id) + " are both '" + printable(tokens_[id]) + "'");
  }
  // Byte-level BPE starts every piece as single bytes, so each must have an id.
  for (int b = 0; b < 256; ++b)
    if (!ids_.contains(std::string(1, static_cast<char>(b))))
      throw ValueError("GPT-2 tokenizer: byte " + std::to_string(b) + " ('" +
                       bytes_to_unicode_string(std::string(1, static_cast<char>(b))) +
                       "') is not a token; all 256 bytes must be");
}

void Gpt2Tokenizer::add_merge(TokenId left, TokenId right) {
  for (TokenId id : {left, right})
    if (id < 0 || id >= vocab_size())
      throw ValueError("merge of token id " + std::to_string(id) + ", outside [0, " +
                       std::to_string(vocab_size()) + ")");
  const std::string bytes = tokens_[static_cast<std::size_t>(left)] + tokens_[static_cast<std::size_t>(right)];
  const TokenId merged = id_of(bytes);
  if (merged < 0)
    throw ValueError("merging '" + bytes_to_unicode_string(tokens_[static_cast<std::size_t>(left)]) +
                     "' and '" + bytes_to_unicode_string(tokens_[static_cast<std::size_t>(right)]) +
                     "' gives '" + printable(bytes_to_unicode_string(bytes)) +
                     "', which is not in the vocabulary");
  const auto rank = static_cast<std::int32_t>(merges_.size());
  if (const auto [it, inserted] = rules_.emplace(pair_key(left, right), Rule{rank, merged}); !inserted)
    throw ValueError("the merge '" + bytes_to_unicode_string(tokens_[static_cast<std::size_t>(left)]) +
                     " " + bytes_to_unicode_string(tokens_[static_cast<std::size_t>(right)]) +
                     "' repeats merge " + std::to_string(it->second.rank));
  merges_.emplace_back(left, right);
}

const std::string& Gpt2Tokenizer::token_bytes(TokenId id) const {
  if (id < 0 || id >= vocab_size())
    throw ValueError("gpt2 tokenizer: id " + std::to_string(id) + " outside [0, " +
                     std::to_string(vocab_size()) + ")");
  return tokens_[static_cast<std::size_t>(id)];
}

TokenId Gpt2Tokenizer::id_of(std::string_view bytes) const {
  const auto it = ids_.find(std::string(bytes));
  return it == ids_.end() ? -1 : it->second;
}

// ---------------------------------------------------------------- encode and decode

// encoder.py's bpe(token):
//   word = tuple(token); pairs = get_pairs(word)
//   while True:
//       bigram = min(pairs, key=lambda pair: self.bpe_ranks.get(pair, float('inf')))
//       if bigram not in self.bpe_ranks: break
//       replace every occurrence of bigram in word, left to right, by first+second
//       if len(word) == 1: break
// with ids instead of strings (the byte alphabet is a bijection, so ranks are the same).
// Quadratic in the piece length, as the reference; pieces are words, so short.
void Gpt2Tokenizer::encode_piece(std::string_view piece, std::vector<TokenId>& out) const {
  std::vector<TokenId> word;
  word.reserve(piece.size());
  for (char c : piece) word.push_back(ids_.at(std::string(1, c)));
  while (word.size() > 1) {
    const Rule* best = nullptr;
    std::uint64_t best_key = 0;
    for (std::size_t i = 0; i + 1 < word.size(); ++i) {
      const std::uint64_t key = pair_key(word[i], word[i + 1]);
      const auto it = rules_.find(key);
      if (it != rules_.end() && (best == nullptr || it->second.rank < best->rank)) {
        best = &it->second;
        best_key = key;
      }
    }
    if (best == nullptr) break;
    std::size_t kept = 0;
    for (std::size_t i = 0; i < word.size(); ++i) {
      if (i + 1 < word.size() && pair_key(word[i], word[i + 1]) == best_key) {
        word[kept++] = best->merged;
        ++i;
      } else {
        word[kept++] = word[i];
      }
    }
    word.resize(kept);
  }
  out.insert(out.end(), word.begin(), word.end());
}

std::vector<TokenId> Gpt2Tokenizer::encode(std::string_view text) const {
  std::vector<TokenId> ids;
  for (std::string_view piece : gpt2_pretokenize(text)) encode_piece(piece, ids);
  return ids;
}

std::string Gpt2Tokenizer::decode(std::span<const TokenId> ids) const {
  std::string out;
  for (std::size_t i = 0; i < ids.size(); ++i) {
    if (ids[i] < 0 || ids[i] >= vocab_size())
      throw ValueError("gpt2 tokenizer: decode: id " + std::to_string(ids[i]) + " at position " +
                       std::to_string(i) + " is outside [0, " + std::to_string(vocab_size()) + ")");
    out += tokens_[static_cast<std::size_t>(ids[i])];
  }
  return out;
}

// ---------------------------------------------------------------- vocab.json and merges.txt

namespace {

// vocab.json: {"<token in the byte alphabet>": id, ...} with ids 0..n-1, each once.
std::vector<std::string> read_vocab_json(std::string_view text, const std::string& source) {
  const io::json::Value root = io::json::parse(text, "'" + source + "'");
  if (root.kind != io::json::Value::Kind::object)
    throw io::FormatError("'" + source + "': expected a JSON object {token: id}, got " +
                          io::json::kind_name(root.kind));
  const std::size_t n = root.items.size();
  std::vector<std::string> tokens(n);
  std::vector<bool> seen(n, false);
  for (std::size_t i = 0; i < n; ++i) {
    const std::string& key = root.keys[i];
    const std::string entry = "'" + source + "': entry " + std::to_string(i) + " ('" + printable(key) + "')";
    if (root.items[i].kind != io::json::Value::Kind::number)
      throw io::FormatError(entry + ": the id is " + io::json::kind_name(root.items[i].kind) +
                            ", not an integer");
    const std::uint64_t id = io::json::to_uint64(root.items[i], entry);
    if (id >= n)
      throw io::FormatError(entry + ": id " + std::to_string(id) + " is outside [0, " +
                            std::to_string(n) + ") (ids must number the " + std::to_string(n) +
                            " entries)");
    if (seen[id]) throw io::FormatError(entry + ": id " + std::to_string(id) + " is used twice");
    seen[id] = true;
    std::optional<std::string> bytes = unicode_string_to_bytes(key);
    if (!bytes || bytes->empty())
      throw io::FormatError(entry + ": not a token in GPT-2's byte alphabet (U+0021..U+0143)");
    tokens[id] = std::move(*bytes);
  }
  return tokens;
}

// merges.txt: an optional "#version: 0.2" first line, then one "left right" per line, rank
// order. encoder.py drops the first line unconditionally; we drop it only when it is that
// comment, so a file without it loses no merge.
void read_merges_txt(Gpt2Tokenizer& tok, std::string_view text, const std::string& source) {
  std::size_t pos = 0;
  for (std::int64_t line = 1; pos < text.size(); ++line) {
    const std::size_t eol = std::min(text.find('\n', pos), text.size());
    const std::string_view content = text.substr(pos, eol - pos);
    pos = eol + 1;
    const std::string where = "'" + source + "':" + std::to_string(line) + ": ";
    if (line == 1 && content.starts_with("#version")) continue;
    const std::size_t space = content.find(' ');
    if (space == std::string_view::npos || space == 0 || space + 1 == content.size() ||
        content.find(' ', space + 1) != std::string_view::npos)
      throw io::FormatError(where + "expected two tokens separated by one space, got '" +
                            printable(content) + "'");
    TokenId ids[2];
    for (int side = 0; side < 2; ++side) {
      const std::string_view part = side == 0 ? content.substr(0, space) : content.substr(space + 1);
      const std::optional<std::string> bytes = unicode_string_to_bytes(part);
      if (!bytes)
        throw io::FormatError(where + "'" + printable(part) + "' is not a token in GPT-2's byte alphabet");
      ids[side] = tok.id_of(*bytes);
      if (ids[side] < 0)
        throw io::FormatError(where + "'" + printable(part) + "' is not in the vocabulary");
    }
    try {
      tok.add_merge(ids[0], ids[1]);
    } catch (const ValueError& e) {
      throw io::FormatError(where + e.what());
    }
  }
}

}  // namespace

Gpt2Tokenizer Gpt2Tokenizer::from_strings(std::string_view vocab_json, std::string_view merges_txt,
                                          const std::string& vocab_source,
                                          const std::string& merges_source) {
  std::vector<std::string> tokens = read_vocab_json(vocab_json, vocab_source);
  std::optional<Gpt2Tokenizer> tok;
  try {
    tok.emplace(std::move(tokens));
  } catch (const ValueError& e) {
    throw io::FormatError("'" + vocab_source + "': " + e.what());
  }
  read_merges_txt(*tok, merges_txt, merges_source);
  return std::move(*tok);
}

Gpt2Tokenizer Gpt2Tokenizer::from_files(const std::string& vocab_json_path,
                                        const std::string& merges_txt_path) {
  return from_strings(io::read_file(vocab_json_path), io::read_file(merges_txt_path),
                      vocab_json_path, merges_txt_path);
}

// ---------------------------------------------------------------- the tokenizer file

// "type gpt2", "vocab N", N lines of token bytes in hex (tokens may hold any byte),
// "merges M", M lines "left right" of ids in rank order, "end".
void Gpt2Tokenizer::save(const std::string& path) const {
  std::string out = detail::tokenizer_file_header("gpt2");
  out += "vocab " + std::to_string(tokens_.size()) + "\n";
  for (const std::string& token : tokens_) out += to_hex(token) + "\n";
  out += "merges " + std::to_string(merges_.size()) + "\n";
  for (const auto& [left, right] : merges_) out += std::to_string(left) + " " + std::to_string(right) + "\n";
  out += "end\n";
  io::write_file_atomic(path, out);
}

Gpt2Tokenizer detail::read_gpt2_body(TokenizerFileReader& reader) {
  const std::int64_t n = reader.keyed_int("vocab", 256, kMaxTokens);
  std::vector<std::string> tokens;
  for (std::int64_t i = 0; i < n; ++i) {
    const std::string_view hex = reader.fields(1)[0];
    std::string bytes;
    for (std::size_t k = 0; k + 1 < hex.size(); k += 2) {
      const int hi = hex_digit(hex[k]);
      const int lo = hex_digit(hex[k + 1]);
      if (hi < 0 || lo < 0) break;
      bytes += static_cast<char>(hi * 16 + lo);
    }
    if (hex.empty() || bytes.size() * 2 != hex.size())
      reader.fail("token " + std::to_string(i) + ": expected lowercase hex bytes");
    tokens.push_back(std::move(bytes));
  }
  std::optional<Gpt2Tokenizer> tok;
  try {
    tok.emplace(std::move(tokens));
  } catch (const ValueError& e) {
    reader.fail(e.what());
  }
  const std::int64_t m = reader.keyed_int("merges", 0, std::numeric_limits<std::int32_t>::max());
  for (std::int64_t i = 0; i < m; ++i) {
    const auto f = reader.fields(2);
    const auto left = static_cast<TokenId>(reader.to_int(f[0], 0, n - 1));
    const auto right = static_cast<TokenId>(reader.to_int(f[1], 0, n - 1));
    try {
      tok->add_merge(left, right);
    } catch (const ValueError& e) {
      reader.fail("merge " + std::to_string(i) + ": " + e.what());
    }
  }
  reader.expect_end();
  return std::move(*tok);
}

Gpt2Tokenizer Gpt2Tokenizer::load(const std::string& path) {
  detail::TokenizerFileReader reader(path);
  if (const std::string type = reader.read_type(); type != "gpt2")
    reader.fail("this is a '" + type + "' tokenizer, not a gpt2 tokenizer (use load_tokenizer)");
  return detail::read_gpt2_body(reader);
}

}  // namespace tapegrad::data
