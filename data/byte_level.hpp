// byte_level.hpp — GPT-2's byte alphabet: bytes_to_unicode() of encoder.py (Radford et al.
// 2019, "Language Models are Unsupervised Multitask Learners", github.com/openai/gpt-2).
//
// GPT-2's vocab.json and merges.txt spell every token as a string of 256 stand-in characters,
// one per byte value: a printable byte ('!'..'~', '¡'..'¬', '®'..'ÿ') stands for itself, and
// the others (controls, space, 0x7f..0xa0, 0xad) for U+0100, U+0101, ... in byte order, so
// ' ' is 'Ġ' (U+0120) and '\n' is 'Ċ' (U+010A). Tokens then never contain whitespace.
// This file maps between the two spellings; it is not the tokenizer (gpt2_tokenizer.hpp).
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace tapegrad::data {

// The stand-in code point of a byte: bytes_to_unicode()[byte].
char32_t byte_to_unicode(unsigned char byte);

// Each byte of `bytes` as its stand-in character, UTF-8 encoded: "a b" -> "aĠb".
std::string bytes_to_unicode_string(std::string_view bytes);

// The inverse: the bytes a string of stand-in characters spells, or std::nullopt when
// `text` is not valid UTF-8 or holds a character outside the alphabet (such as 'é' written
// as U+00E9 is inside, but U+0144 or '漢' are not).
std::optional<std::string> unicode_string_to_bytes(std::string_view text);

}  // namespace tapegrad::data
