// checksum.cpp — table-driven CRC-32, reflected, polynomial 0xEDB88320 (zlib's crc32).
#include "checksum.hpp"

#include <array>

namespace tapegrad::io {

namespace {

// table[b] = the CRC of the single byte b: eight shift-and-xor steps, done once at compile time.
constexpr std::array<std::uint32_t, 256> make_crc_table() {
  std::array<std::uint32_t, 256> table{};
  for (std::uint32_t b = 0; b < 256; ++b) {
    std::uint32_t c = b;
    for (int bit = 0; bit < 8; ++bit) c = (c & 1) ? 0xEDB88320u ^ (c >> 1) : c >> 1;
    table[b] = c;
  }
  return table;
}

constexpr std::array<std::uint32_t, 256> kCrcTable = make_crc_table();

}  // namespace

std::uint32_t crc32_update(std::uint32_t crc, const void* data, std::size_t size) {
  const auto* p = static_cast<const unsigned char*>(data);
  crc = ~crc;  // the register starts at 0xFFFFFFFF and the result is inverted (zlib's convention)
  for (std::size_t i = 0; i < size; ++i) crc = kCrcTable[(crc ^ p[i]) & 0xFFu] ^ (crc >> 8);
  return ~crc;
}

}  // namespace tapegrad::io
