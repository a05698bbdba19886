// checksum.hpp — CRC-32 (the IEEE polynomial of zip, PNG and zlib), to detect corrupted files.
//
// crc32("123456789") == 0xCBF43926, and the value equals Python's zlib.crc32(data), so a
// learner can check a file by hand. A CRC detects every burst of flipped bits up to 32 bits
// long; it is not a defence against someone who forges a file on purpose (sizes are checked
// separately for that).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace tapegrad::io {

// CRC-32 of `size` bytes, continuing from `crc` (0 to start), zlib's crc32(crc, buf, len):
// crc32_update(crc32_update(0, a, na), b, nb) is the CRC of a followed by b.
std::uint32_t crc32_update(std::uint32_t crc, const void* data, std::size_t size);
// CRC-32 of bytes.
inline std::uint32_t crc32(std::string_view bytes) { return crc32_update(0, bytes.data(), bytes.size()); }

}  // namespace tapegrad::io
