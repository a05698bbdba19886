// byte_level.cpp — GPT-2's bytes_to_unicode() table and its inverse.
#include "byte_level.hpp"

#include <array>
#include <cstdint>

namespace tapegrad::data {

namespace {

// encoder.py:
//   bs = list(range(ord("!"), ord("~")+1)) + list(range(ord("¡"), ord("¬")+1)) +
//        list(range(ord("®"), ord("ÿ")+1))
//   cs = bs[:]; n = 0
//   for b in range(2**8):
//       if b not in bs: bs.append(b); cs.append(2**8+n); n += 1
// i.e. a printable byte maps to itself, the n-th other byte (in byte order) to 256 + n.
constexpr bool is_printable(unsigned b) {
  return (b >= '!' && b <= '~') || (b >= 0xa1 && b <= 0xac) || (b >= 0xae && b <= 0xff);
}

constexpr unsigned kAlphabetEnd = 256 + 68;  // 68 bytes are not printable: U+0100..U+0143

struct Tables {
  std::array<char32_t, 256> to_unicode{};
  std::array<std::int16_t, kAlphabetEnd> to_byte{};  // -1: not a stand-in character
};

constexpr Tables make_tables() {
  Tables t;
  for (auto& b : t.to_byte) b = -1;
  unsigned n = 0;
  for (unsigned b = 0; b < 256; ++b) {
    const char32_t c = is_printable(b) ? b : 256 + n++;
    t.to_unicode[b] = c;
    t.to_byte[c] = static_cast<std::int16_t>(b);
  }
  return t;
}

constexpr Tables kTables = make_tables();

}  // namespace

char32_t byte_to_unicode(unsigned char byte) { return kTables.to_unicode[byte]; }

std::string bytes_to_unicode_string(std::string_view bytes) {
  std::string out;
  out.reserve(bytes.size() * 2);
  for (unsigned char b : bytes) {
    const char32_t c = kTables.to_unicode[b];
    if (c < 0x80) {
      out += static_cast<char>(c);
    } else {  // every stand-in is below U+0800: two UTF-8 bytes
      out += static_cast<char>(0xc0 | (c >> 6));
      out += static_cast<char>(0x80 | (c & 0x3f));
    }
  }
  return out;
}

std::optional<std::string> unicode_string_to_bytes(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size();) {
    const auto b0 = static_cast<unsigned char>(text[i]);
    char32_t c = 0;
    if (b0 < 0x80) {
      c = b0;
      i += 1;
    } else if ((b0 & 0xe0) == 0xc0 && i + 1 < text.size() &&
               (static_cast<unsigned char>(text[i + 1]) & 0xc0) == 0x80) {
      c = ((b0 & 0x1fu) << 6) | (static_cast<unsigned char>(text[i + 1]) & 0x3fu);
      if (c < 0x80) return std::nullopt;  // overlong
      i += 2;
    } else {
      return std::nullopt;  // a longer sequence (outside the alphabet) or invalid UTF-8
    }
    if (c >= kAlphabetEnd || kTables.to_byte[c] < 0) return std::nullopt;
    out += static_cast<char>(kTables.to_byte[c]);
  }
  return out;
}

}  // namespace tapegrad::data
