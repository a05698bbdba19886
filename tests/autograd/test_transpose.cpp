// test_transpose.cpp — transpose_into (autograd/cpu/transpose.hpp), the attention's staged kᵀ
// and vᵀ: every element lands at its transposed place, for float (16×16 tiles in registers,
// and the scalar loop for partial tiles) and double (scalar), with source and destination
// strides wider than the matrix, as the packed qkv and the staging scratch have; nothing
// outside the destination's (cols, rows) block is written.
#include <cstdint>
#include <string>
#include <vector>

#include <tapegrad/autograd/cpu/transpose.hpp>

#include <catch2/catch.hpp>

namespace {

template <typename T>
void check_transpose(std::int64_t rows, std::int64_t cols, std::int64_t ld_src, std::int64_t ld_dst) {
  std::vector<T> src(static_cast<std::size_t>(rows * ld_src + 1));
  for (std::size_t i = 0; i < src.size(); ++i) src[i] = static_cast<T>(i) + T(0.5);  // distinct values
  const T untouched = T(-1);
  std::vector<T> dst(static_cast<std::size_t>(cols * ld_dst + 1), untouched);
  tapegrad::detail::transpose_into(dst.data(), ld_dst, src.data(), ld_src, rows, cols);
  std::int64_t wrong = 0, stray = 0;
  for (std::int64_t c = 0; c < cols; ++c)
    for (std::int64_t j = 0; j < ld_dst; ++j) {
      const T got = dst[static_cast<std::size_t>(c * ld_dst + j)];
      if (j < rows) wrong += got != src[static_cast<std::size_t>(j * ld_src + c)];
      else stray += got != untouched;
    }
  stray += dst.back() != untouched;
  INFO(std::string(sizeof(T) == 4 ? "float" : "double") + " rows " + std::to_string(rows) + " cols " +
       std::to_string(cols) + " ld_src " + std::to_string(ld_src) + " ld_dst " + std::to_string(ld_dst));
  CHECK(wrong == 0);
  CHECK(stray == 0);
}

}  // namespace

TEST_CASE("transpose_into: every element at its transposed place, full and partial tiles", "[transpose]") {
  // (rows, cols): whole 16×16 tiles (S's 64×32 head, M's 256×64), one tile, partial tiles on
  // either side and both, a single row or column, and nothing.
  const std::vector<std::pair<std::int64_t, std::int64_t>> sizes = {
      {16, 16}, {64, 32}, {256, 64}, {17, 16}, {16, 17}, {33, 47}, {1, 40}, {40, 1}, {15, 15}, {0, 16}, {16, 0}};
  for (const auto& [rows, cols] : sizes)
    for (const std::int64_t extra : {0, 3, 1152}) {  // source rows as wide as the matrix, or wider (packed qkv)
      check_transpose<float>(rows, cols, cols + extra, rows + extra % 7);
      check_transpose<double>(rows, cols, cols + extra, rows + extra % 7);
    }
}
