// tokenizer_file.hpp — the line format shared by the tokenizer files (internal to data/).
//
//   tapegrad-tokenizer 1        magic and format version
//   type char                   or bpe, or gpt2
//   ...                         the type's own lines, one record per line
//   end
//
// TokenizerFileReader turns every defect (wrong magic, newer version, a missing line, a number
// out of range, trailing junk) into io::FormatError "<path>:<line>: ...", never a crash.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace tapegrad::data {
class BpeTokenizer;
class Tokenizer;
class CharTokenizer;
class Gpt2Tokenizer;
}  // namespace tapegrad::data

namespace tapegrad::data::detail {

inline constexpr std::string_view kTokenizerMagic = "tapegrad-tokenizer";
inline constexpr std::int64_t kTokenizerFormatVersion = 1;

class TokenizerFileReader {
 public:
  // Reads the file and checks the magic and version lines.
  explicit TokenizerFileReader(const std::string& path);
  // "<path>" for files read from memory in tests.
  TokenizerFileReader(std::string text, const std::string& source);

  // The value of the `type` line.
  std::string read_type();
  // The fields of the next line, split on single spaces; FormatError at the end of the file
  // or when there are not expected_count of them.
  std::vector<std::string_view> fields(std::size_t expected_count);
  // `key value` with an integer value in [lo, hi].
  std::int64_t keyed_int(std::string_view key, std::int64_t lo, std::int64_t hi);
  // An integer field in [lo, hi] of the current line.
  std::int64_t to_int(std::string_view field, std::int64_t lo, std::int64_t hi) const;
  // The `end` line, and nothing after it.
  void expect_end();
  [[noreturn]] void fail(const std::string& what) const;

 private:
  void check_header();
  std::vector<std::string_view> next_line();

  std::string text_;
  std::string source_;
  std::size_t pos_ = 0;
  std::int64_t line_ = 0;
};

// The lines after `type`, up to `end`, of each tokenizer type (in tokenizer.cpp and bpe.cpp).
CharTokenizer read_char_body(TokenizerFileReader& reader);
BpeTokenizer read_bpe_body(TokenizerFileReader& reader);
Gpt2Tokenizer read_gpt2_body(TokenizerFileReader& reader);  // in gpt2_tokenizer.cpp

// The tokenizer of any type, after the header: load_tokenizer() on a reader (in tokenizer.cpp;
// fuzz/fuzz_load_tokenizer.cpp reads from memory through it).
std::unique_ptr<Tokenizer> read_tokenizer(TokenizerFileReader& reader);

// "tapegrad-tokenizer 1\ntype <type>\n"
std::string tokenizer_file_header(std::string_view type);

}  // namespace tapegrad::data::detail
