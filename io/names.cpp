// names.cpp — name validation and printable().
#include "names.hpp"

#include <algorithm>

#include "json.hpp"

namespace tapegrad::io {

std::string name_problem(std::string_view name) {
  if (name.empty()) return "the name is empty";
  if (name.size() > kMaxNameBytes)
    return "the name is " + std::to_string(name.size()) + " bytes long (at most " +
           std::to_string(kMaxNameBytes) + ")";
  if (!is_valid_utf8(name)) return "the name " + printable(name) + " is not valid UTF-8";
  for (char c : name)
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7F)
      return "the name " + printable(name) + " contains a control character";
  return "";
}

std::string printable(std::string_view s) {
  static constexpr char kHex[] = "0123456789abcdef";
  constexpr std::size_t kShown = 80;
  // Valid UTF-8 is shown as is (a name may be "naïve"); anything else byte by byte in hex.
  const bool utf8 = is_valid_utf8(s);
  std::size_t shown = std::min(s.size(), kShown);
  if (utf8)  // do not cut a multi-byte character in two
    while (shown < s.size() && shown > 0 && (static_cast<unsigned char>(s[shown]) & 0xC0) == 0x80) --shown;
  std::string out = "\"";
  for (std::size_t i = 0; i < shown; ++i) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c < 0x20 || c == 0x7F || c == '"' || c == '\\' || (c >= 0x80 && !utf8)) {
      out += "\\x";
      out += kHex[c >> 4];
      out += kHex[c & 0xF];
    } else {
      out += static_cast<char>(c);
    }
  }
  out += '"';
  if (shown < s.size()) out += "... (" + std::to_string(s.size()) + " bytes)";
  return out;
}

}  // namespace tapegrad::io
