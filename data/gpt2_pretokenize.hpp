// gpt2_pretokenize.hpp — GPT-2's pre-tokenization: the regular expression of encoder.py
// (Radford et al. 2019) that cuts text into pieces before byte-level BPE runs on each piece:
//
//   's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
//
// (\s written \p{White_Space}, which is what the `regex` module GPT-2 uses means by \s)
// matched with PCRE2 (Unicode classes; JIT-compiled where PCRE2 has a JIT), the one file of
// the library that includes pcre2.h. Not a hand-written matcher: \p{L} and \p{N} are
// Unicode's letter and number classes, which only a Unicode library tracks correctly.
#pragma once

#include <string_view>
#include <vector>

namespace tapegrad::data {

// The pieces re.findall(pattern, text) returns, as views into `text`; they concatenate back
// to `text`. Any bytes are accepted: the pattern is matched with PCRE2_MATCH_INVALID_UTF, so
// a byte that is not part of valid UTF-8 matches nothing, and each run of such bytes between
// two matches becomes a piece of its own (GPT-2's Python code never sees such bytes; keeping
// them as pieces keeps decode(encode(s)) == s for every byte string).
std::vector<std::string_view> gpt2_pretokenize(std::string_view text);

}  // namespace tapegrad::data
