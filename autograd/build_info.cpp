// build_info.cpp — build_id() from the header cmake/build_id.cmake generates.
#include "build_info.hpp"

#include <bit>
#include <cstddef>
#include <cstdint>

#include "tapegrad_build_id.h"

namespace tapegrad {

std::string build_id() {
  // The sizes and byte order that tensor data and files depend on.
  const std::string layout = "float32 " + std::to_string(sizeof(float)) + " B, float64 " + std::to_string(sizeof(double)) +
                             " B, int64 " + std::to_string(sizeof(std::int64_t)) + " B, size_t " +
                             std::to_string(sizeof(std::size_t)) + " B, " +
                             (std::endian::native == std::endian::little ? "little-endian" : "big-endian");
  return std::string("tapegrad ") + TAPEGRAD_BUILD_VERSION + " (" + TAPEGRAD_BUILD_COMMIT + ", " +
         TAPEGRAD_BUILD_COMPILER + ", " + TAPEGRAD_BUILD_TYPE + ", " + TAPEGRAD_BUILD_OPTIONS + "; " + layout + ")";
}

}  // namespace tapegrad
