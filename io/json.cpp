// json.cpp — recursive-descent JSON parser with a depth cap, and UTF-8 validation.
#include "json.hpp"

#include <unordered_set>

#include "errors.hpp"
#include "names.hpp"

namespace tapegrad::io {

bool is_valid_utf8(std::string_view s) {
  const auto* p = reinterpret_cast<const unsigned char*>(s.data());
  const std::size_t n = s.size();
  std::size_t i = 0;
  while (i < n) {
    const unsigned char c = p[i];
    if (c < 0x80) { ++i; continue; }
    int extra = 0;
    std::uint32_t code = 0, min_code = 0;
    if ((c & 0xE0) == 0xC0) { extra = 1; code = c & 0x1Fu; min_code = 0x80; }
    else if ((c & 0xF0) == 0xE0) { extra = 2; code = c & 0x0Fu; min_code = 0x800; }
    else if ((c & 0xF8) == 0xF0) { extra = 3; code = c & 0x07u; min_code = 0x10000; }
    else return false;  // a continuation byte where a sequence should start, or 0xF8..0xFF
    if (n - i <= static_cast<std::size_t>(extra)) return false;  // truncated sequence
    for (int k = 1; k <= extra; ++k) {
      if ((p[i + k] & 0xC0) != 0x80) return false;
      code = (code << 6) | (p[i + k] & 0x3Fu);
    }
    if (code < min_code || code > 0x10FFFF || (code >= 0xD800 && code <= 0xDFFF)) return false;
    i += static_cast<std::size_t>(extra) + 1;
  }
  return true;
}

namespace json {

const Value* Value::find(std::string_view key) const {
  for (std::size_t i = 0; i < keys.size(); ++i)
    if (keys[i] == key) return &items[i];
  return nullptr;
}

const char* kind_name(Value::Kind kind) {
  switch (kind) {
    case Value::Kind::null: return "null";
    case Value::Kind::boolean: return "a boolean";
    case Value::Kind::number: return "a number";
    case Value::Kind::string: return "a string";
    case Value::Kind::array: return "an array";
    case Value::Kind::object: return "an object";
  }
  return "?";
}

namespace {

class Parser {
 public:
  Parser(std::string_view text, const std::string& what, const Limits& limits)
      : s_(text), what_(what), limits_(limits) {}

  Value parse_document() {
    Value v = parse_value(0);
    skip_space();
    if (pos_ != s_.size()) fail("unexpected text after the JSON value");
    return v;
  }

 private:
  [[noreturn]] void fail(const std::string& why) const {
    throw FormatError(what_ + ": " + why + " at byte " + std::to_string(pos_));
  }

  void skip_space() {
    while (pos_ < s_.size() && (s_[pos_] == ' ' || s_[pos_] == '\t' || s_[pos_] == '\n' || s_[pos_] == '\r'))
      ++pos_;
  }

  bool consume(char c) {
    if (pos_ < s_.size() && s_[pos_] == c) { ++pos_; return true; }
    return false;
  }

  void expect_word(std::string_view word) {
    if (s_.substr(pos_, word.size()) != word) fail("invalid literal");
    pos_ += word.size();
  }

  Value parse_value(int depth) {
    if (++values_ > limits_.max_values)
      fail("more than " + std::to_string(limits_.max_values) + " values");
    skip_space();
    if (pos_ >= s_.size()) fail("unexpected end of input, expected a value");
    Value v;
    const char c = s_[pos_];
    if (c == '{' || c == '[') {
      if (depth >= limits_.max_depth) fail("nested deeper than " + std::to_string(limits_.max_depth) + " levels");
      ++pos_;
      if (c == '{') parse_object(v, depth + 1);
      else parse_array(v, depth + 1);
    } else if (c == '"') {
      v.kind = Value::Kind::string;
      v.text = parse_string();
    } else if (c == 't') {
      expect_word("true");
      v.kind = Value::Kind::boolean;
      v.boolean = true;
    } else if (c == 'f') {
      expect_word("false");
      v.kind = Value::Kind::boolean;
    } else if (c == 'n') {
      expect_word("null");
    } else if (c == '-' || (c >= '0' && c <= '9')) {
      v.kind = Value::Kind::number;
      v.text = parse_number();
    } else {
      fail("unexpected character");
    }
    return v;
  }

  void parse_object(Value& v, int depth) {
    v.kind = Value::Kind::object;
    skip_space();
    if (consume('}')) return;
    std::unordered_set<std::string> seen;  // a set, not find(): a header may hold 10^5 keys
    while (true) {
      skip_space();
      if (pos_ >= s_.size() || s_[pos_] != '"') fail("expected a string key");
      std::string key = parse_string();
      if (!seen.insert(key).second) fail("duplicate key " + printable(key));
      skip_space();
      if (!consume(':')) fail("expected ':' after a key");
      Value member = parse_value(depth);
      v.keys.push_back(std::move(key));
      v.items.push_back(std::move(member));
      skip_space();
      if (consume('}')) return;
      if (!consume(',')) fail("expected ',' or '}' in an object");
    }
  }

  void parse_array(Value& v, int depth) {
    v.kind = Value::Kind::array;
    skip_space();
    if (consume(']')) return;
    while (true) {
      v.items.push_back(parse_value(depth));
      skip_space();
      if (consume(']')) return;
      if (!consume(',')) fail("expected ',' or ']' in an array");
    }
  }

  // -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?
  std::string parse_number() {
    const std::size_t start = pos_;
    auto digits = [&] {
      const std::size_t from = pos_;
      while (pos_ < s_.size() && s_[pos_] >= '0' && s_[pos_] <= '9') ++pos_;
      if (pos_ == from) fail("malformed number");
    };
    consume('-');
    if (consume('0')) {
      if (pos_ < s_.size() && s_[pos_] >= '0' && s_[pos_] <= '9') fail("number with a leading zero");
    } else {
      digits();
    }
    if (consume('.')) digits();
    if (consume('e') || consume('E')) {
      if (!consume('+')) consume('-');
      digits();
    }
    return std::string(s_.substr(start, pos_ - start));
  }

  unsigned hex4() {
    if (s_.size() - pos_ < 4) fail("truncated \\u escape");
    unsigned code = 0;
    for (int k = 0; k < 4; ++k) {
      const char h = s_[pos_++];
      code <<= 4;
      if (h >= '0' && h <= '9') code |= static_cast<unsigned>(h - '0');
      else if (h >= 'a' && h <= 'f') code |= static_cast<unsigned>(h - 'a' + 10);
      else if (h >= 'A' && h <= 'F') code |= static_cast<unsigned>(h - 'A' + 10);
      else fail("bad hex digit in a \\u escape");
    }
    return code;
  }

  static void append_utf8(std::string& out, unsigned code) {
    if (code < 0x80) {
      out += static_cast<char>(code);
    } else if (code < 0x800) {
      out += static_cast<char>(0xC0 | (code >> 6));
      out += static_cast<char>(0x80 | (code & 0x3F));
    } else if (code < 0x10000) {
      out += static_cast<char>(0xE0 | (code >> 12));
      out += static_cast<char>(0x80 | ((code >> 6) & 0x3F));
      out += static_cast<char>(0x80 | (code & 0x3F));
    } else {
      out += static_cast<char>(0xF0 | (code >> 18));
      out += static_cast<char>(0x80 | ((code >> 12) & 0x3F));
      out += static_cast<char>(0x80 | ((code >> 6) & 0x3F));
      out += static_cast<char>(0x80 | (code & 0x3F));
    }
  }

  // Called on the opening quote; returns the decoded string.
  std::string parse_string() {
    ++pos_;
    std::string out;
    while (true) {
      // Copy a run of plain bytes at once, validating it as UTF-8.
      const std::size_t run = pos_;
      while (pos_ < s_.size() && s_[pos_] != '"' && s_[pos_] != '\\' &&
             static_cast<unsigned char>(s_[pos_]) >= 0x20)
        ++pos_;
      const std::string_view plain = s_.substr(run, pos_ - run);
      if (!is_valid_utf8(plain)) fail("string is not valid UTF-8");
      out.append(plain);
      if (pos_ >= s_.size()) fail("unterminated string");
      const char c = s_[pos_++];
      if (c == '"') return out;
      if (c != '\\') fail("control character in a string");
      if (pos_ >= s_.size()) fail("unterminated string");
      const char e = s_[pos_++];
      switch (e) {
        case '"': out += '"'; break;
        case '\\': out += '\\'; break;
        case '/': out += '/'; break;
        case 'b': out += '\b'; break;
        case 'f': out += '\f'; break;
        case 'n': out += '\n'; break;
        case 'r': out += '\r'; break;
        case 't': out += '\t'; break;
        case 'u': {
          unsigned code = hex4();
          if (code >= 0xDC00 && code <= 0xDFFF) fail("lone low surrogate in a \\u escape");
          if (code >= 0xD800 && code <= 0xDBFF) {  // a high surrogate must be followed by a low one
            if (s_.substr(pos_, 2) != "\\u") fail("lone high surrogate in a \\u escape");
            pos_ += 2;
            const unsigned low = hex4();
            if (low < 0xDC00 || low > 0xDFFF) fail("lone high surrogate in a \\u escape");
            code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00);
          }
          append_utf8(out, code);
          break;
        }
        default: fail("invalid escape in a string");
      }
    }
  }

  std::string_view s_;
  const std::string& what_;
  Limits limits_;
  std::size_t pos_ = 0;
  std::size_t values_ = 0;
};

}  // namespace

Value parse(std::string_view text, const std::string& what, const Limits& limits) {
  return Parser(text, what, limits).parse_document();
}

std::uint64_t to_uint64(const Value& value, const std::string& what) {
  if (value.kind != Value::Kind::number)
    throw FormatError(what + " must be a non-negative integer, got " + kind_name(value.kind));
  const std::string& t = value.text;
  std::uint64_t result = 0;
  for (char c : t) {
    if (c < '0' || c > '9') throw FormatError(what + " must be a non-negative integer, got " + t);
    const auto digit = static_cast<std::uint64_t>(c - '0');
    if (result > (UINT64_MAX - digit) / 10) throw FormatError(what + " is too large: " + t);
    result = result * 10 + digit;
  }
  return result;
}

std::string quote(std::string_view s) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out = "\"";
  for (char c : s) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      case '\b': out += "\\b"; break;
      case '\f': out += "\\f"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          out += "\\u00";
          out += kHex[(c >> 4) & 0xF];
          out += kHex[c & 0xF];
        } else {
          out += c;
        }
    }
  }
  return out + "\"";
}

}  // namespace json
}  // namespace tapegrad::io
