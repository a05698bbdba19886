// codec.hpp — internals shared by the checkpoint and safetensors codecs (not part of the API):
// the caps on what a file may claim, dtype codes, checked shape arithmetic and a read-only
// stream over bytes in memory.
#pragma once

#include <bit>
#include <cstdint>
#include <streambuf>
#include <string>
#include <string_view>

#include "checkpoint.hpp"

namespace tapegrad::io::detail {

// Tensor bytes are stored little-endian and copied as they are in memory.
static_assert(std::endian::native == std::endian::little,
              "tapegrad's file formats assume a little-endian machine");

// Caps on counts a file may claim; anything above is refused before any allocation.
inline constexpr std::uint32_t kMaxSections = 1024;
inline constexpr std::uint32_t kMaxTensors = 1u << 20;     // per section
inline constexpr std::uint32_t kMaxMetadata = 1u << 16;    // metadata entries
inline constexpr std::uint32_t kMaxDims = 32;              // dims of one tensor
inline constexpr std::uint64_t kMaxStringBytes = 1u << 24;  // one metadata string value
// Product of the dims of a shape, zero dims counted as 1: bounds every stride, so no shape
// read from a file can overflow stride arithmetic, not even an empty one like [0, 2^62, 2^62].
inline constexpr std::int64_t kMaxElements = std::int64_t{1} << 48;

// The dtype codes of both tapegrad formats: 0 float32, 1 float64, 2 int64.
std::uint8_t dtype_code(DType dtype);
// false for an unknown code
bool dtype_from_code(std::uint64_t code, DType& dtype);

// The number of elements of a shape read from a file. Throws FormatError("<what>: ...") for
// a negative dim, more than kMaxDims dims, or more than kMaxElements elements.
std::int64_t checked_numel(const Shape& shape, const std::string& what);

// Throws ValueError / DTypeError when a checkpoint cannot be saved: a bad or duplicate name,
// a metadata string that is not UTF-8, a dtype other than float32/float64/int64.
void check_saveable(const Checkpoint& checkpoint);

// The values of t in a contiguous tensor, cut from the graph (t itself when possible).
Tensor contiguous_values(const Tensor& t);

std::string encode_binary(const Checkpoint& checkpoint);
Checkpoint decode_binary(std::string_view bytes, const std::string& source);
std::string encode_json(const Checkpoint& checkpoint);
Checkpoint decode_json(std::string_view bytes, const std::string& source);

// A read-only std::streambuf over bytes in memory (std::ispanstream arrives in C++23).
class MemoryBuffer : public std::streambuf {
 public:
  explicit MemoryBuffer(std::string_view bytes) {
    char* begin = const_cast<char*>(bytes.data());  // never written through: no put area
    setg(begin, begin, begin + bytes.size());
  }
  std::size_t remaining() const { return static_cast<std::size_t>(egptr() - gptr()); }
  std::size_t position() const { return static_cast<std::size_t>(gptr() - eback()); }
};

}  // namespace tapegrad::io::detail
