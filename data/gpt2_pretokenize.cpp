// gpt2_pretokenize.cpp — GPT-2's pre-tokenization pattern through PCRE2.
#define PCRE2_CODE_UNIT_WIDTH 8
#include "gpt2_pretokenize.hpp"

#include <pcre2.h>

#include <memory>
#include <string>

#include "../autograd/errors.hpp"

namespace tapegrad::data {

namespace {

// encoder.py's pattern, with \s spelled \p{White_Space} (and \S \P{White_Space}): that is
// what the `regex` module's \s matches in a str pattern, while PCRE2's \s (UCP) also matches
// U+180E MONGOLIAN VOWEL SEPARATOR, a space before Unicode 6.3. The test corpus checks both.
constexpr std::string_view kPattern =
    R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\p{White_Space}\p{L}\p{N}]+|)"
    R"(\p{White_Space}+(?!\P{White_Space})|\p{White_Space}+)";

struct CodeDeleter {
  void operator()(pcre2_code* code) const { pcre2_code_free(code); }
};
struct MatchDataDeleter {
  void operator()(pcre2_match_data* data) const { pcre2_match_data_free(data); }
};

// Compiled once, on first use (thread-safe static initialization); read-only afterwards, so
// threads share it. PCRE2_UTF: code points, not bytes. PCRE2_UCP: classes and case by
// Unicode properties, as Python's `regex` module does for str patterns. PCRE2_MATCH_INVALID_UTF:
// invalid UTF-8 never matches and is skipped instead of being undefined behaviour (the
// alternative, validating first and passing PCRE2_NO_UTF_CHECK, would reject such input).
pcre2_code* compiled_pattern() {
  static const std::unique_ptr<pcre2_code, CodeDeleter> code = [] {
    int error = 0;
    PCRE2_SIZE offset = 0;
    pcre2_code* c = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(kPattern.data()), kPattern.size(),
                                  PCRE2_UTF | PCRE2_UCP | PCRE2_MATCH_INVALID_UTF, &error,
                                  &offset, nullptr);
    if (c == nullptr) {
      PCRE2_UCHAR message[256];
      pcre2_get_error_message(error, message, sizeof message);
      throw Error("GPT-2 pre-tokenizer: PCRE2 cannot compile the pattern at offset " +
                  std::to_string(offset) + ": " + reinterpret_cast<const char*>(message));
    }
    // JIT is an optimization: when PCRE2 was built without it (or the CPU is not supported)
    // this fails and pcre2_match interprets the pattern instead, with the same results.
    (void)pcre2_jit_compile(c, PCRE2_JIT_COMPLETE);
    return std::unique_ptr<pcre2_code, CodeDeleter>(c);
  }();
  return code.get();
}

}  // namespace

std::vector<std::string_view> gpt2_pretokenize(std::string_view text) {
  pcre2_code* code = compiled_pattern();
  const std::unique_ptr<pcre2_match_data, MatchDataDeleter> match(
      pcre2_match_data_create_from_pattern(code, nullptr));
  if (!match) throw Error("GPT-2 pre-tokenizer: out of memory for PCRE2 match data");
  const auto* subject = reinterpret_cast<PCRE2_SPTR>(text.data());
  std::vector<std::string_view> pieces;
  std::size_t pos = 0;   // where the next match may start
  std::size_t done = 0;  // bytes already in pieces
  while (pos < text.size()) {
    const int rc = pcre2_match(code, subject, text.size(), pos, 0, match.get(), nullptr);
    if (rc == PCRE2_ERROR_NOMATCH) break;
    if (rc < 0) {
      PCRE2_UCHAR message[256];
      pcre2_get_error_message(rc, message, sizeof message);
      throw Error(std::string("GPT-2 pre-tokenizer: PCRE2 match failed: ") +
                  reinterpret_cast<const char*>(message));
    }
    const PCRE2_SIZE* ovector = pcre2_get_ovector_pointer(match.get());
    const std::size_t begin = ovector[0];
    const std::size_t end = ovector[1];
    // Every alternative matches at least one character, so end > begin and the loop moves on.
    if (begin > done) pieces.push_back(text.substr(done, begin - done));  // invalid UTF-8
    pieces.push_back(text.substr(begin, end - begin));
    done = end;
    pos = end;
  }
  if (done < text.size()) pieces.push_back(text.substr(done));  // trailing invalid UTF-8
  return pieces;
}

}  // namespace tapegrad::data
