// json.hpp — a small, strict, bounded JSON parser (RFC 8259) for headers read from untrusted
// files, and the string quoting used to write them.
//
// Strict: exactly one value, no trailing commas, no comments, no NaN, strings must be UTF-8,
// object keys must be unique. Bounded: nesting depth and the number of values are capped, and
// the parser recurses at most max_depth levels, so a hostile header cannot exhaust the stack
// or the memory. Numbers are kept as their text; the caller converts the ones it needs with a
// range check (to_uint64). Errors are FormatError("<what>: ... at byte N").
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace tapegrad::io {

// Whether s is well-formed UTF-8: no overlong forms, no surrogates (U+D800..U+DFFF), nothing
// above U+10FFFF, no truncated sequence.
bool is_valid_utf8(std::string_view s);

namespace json {

struct Value {
  enum class Kind : std::uint8_t { null, boolean, number, string, array, object };
  Kind kind = Kind::null;
  bool boolean = false;
  std::string text;               // string: decoded UTF-8; number: as written
  std::vector<Value> items;       // array: the elements; object: the values, in file order
  std::vector<std::string> keys;  // object: keys[i] names items[i]; unique
  // (Two vectors rather than a vector of pairs: std::pair<std::string, Value> would need
  // Value complete inside its own definition; std::vector alone allows an incomplete type.)

  // The member named key of an object, or nullptr.
  const Value* find(std::string_view key) const;
};

const char* kind_name(Value::Kind kind);

struct Limits {
  int max_depth = 16;                  // nested arrays/objects
  std::size_t max_values = 1u << 20;   // values in the whole document
};

// Parses `text`, which must hold one JSON value and nothing else but whitespace. `what` names
// the input in error messages ("safetensors header of 'model.safetensors'").
Value parse(std::string_view text, const std::string& what, const Limits& limits = {});

// A number that is a plain non-negative integer ("0", "42"; not "1.0", "-1", "1e3") that
// fits in 64 bits. Throws FormatError("<what>: ...") otherwise.
std::uint64_t to_uint64(const Value& value, const std::string& what);

// s as a JSON string literal, escaped the way Python's json.dumps(s, ensure_ascii=False)
// does it, so both write byte-identical headers: \" \\ \n \r \t \b \f, other control
// characters as \u00xx, everything else (UTF-8 included) as is.
std::string quote(std::string_view s);

}  // namespace json
}  // namespace tapegrad::io
