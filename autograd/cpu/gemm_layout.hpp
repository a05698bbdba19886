// gemm_layout.hpp — can BLAS gemm read a strided matrix in place, and with which transpose
// flag and leading dimension? One test for ops/matmul.cpp and ops/attention.cpp.
//
// gemm reads a row-major matrix: element (i, j) at i·ld + j, with ld ≥ max(cols, 1) (BLAS
// rejects a smaller ld even when it never steps by it). A view whose column stride is 1 is
// such a matrix, ld = its row stride; a view whose row stride is 1 (a transposed view) is the
// transpose of one, read through gemm's transpose flag, ld = its column stride. Anything else
// must be copied (contiguous) first. Pure stride arithmetic: no Tensor, no cblas here.
#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>

namespace tapegrad {

// How gemm reads a matrix: as stored (trans = false) or through the transpose flag.
struct GemmLayout {
  bool trans = false;
  std::int64_t ld = 0;  // gemm's leading dimension
};

// The layout of a (rows, cols) matrix whose element (i, j) is at i·row_stride + j·col_stride,
// when gemm can read it in place:
//   as stored  when col_stride = 1 (or cols = 1) and row_stride ≥ max(cols, 1): ld = row_stride;
//   transposed when row_stride = 1 (or rows = 1) and col_stride ≥ max(rows, 1): ld = col_stride.
// The first that holds wins; std::nullopt when neither does.
inline std::optional<GemmLayout> gemm_layout(std::int64_t rows, std::int64_t cols, std::int64_t row_stride,
                                             std::int64_t col_stride) {
  if ((col_stride == 1 || cols == 1) && row_stride >= std::max<std::int64_t>(cols, 1))
    return GemmLayout{false, row_stride};
  if ((row_stride == 1 || rows == 1) && col_stride >= std::max<std::int64_t>(rows, 1))
    return GemmLayout{true, col_stride};
  return std::nullopt;
}

}  // namespace tapegrad
