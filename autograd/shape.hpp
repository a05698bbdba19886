// shape.hpp — the Shape type and pure shape and stride arithmetic: element counts,
// contiguous strides, dim normalization, NumPy broadcasting, the (outer, size, inner) view
// around one dim, and a row-major walk over a strided view. Nothing here knows Tensor
// (tensor.hpp includes this file, never the reverse).
#pragma once

#include <cstdint>
#include <vector>

namespace tapegrad {

// Sizes of the dims, outermost first; also used for strides (in elements) and dim lists.
using Shape = std::vector<std::int64_t>;

// The number of elements: the product of the sizes (1 for a 0-d shape).
std::int64_t shape_numel(const Shape& shape);
// Contiguous row-major strides for a shape: strides[d] = Π_{e > d} shape[e].
Shape contiguous_strides(const Shape& shape);
// The multi-index of row-major element `flat` of shape, as numpy.unravel_index: element 5 of
// (2, 3) is (1, 2). What an error message names instead of a flat position.
Shape unravel_index(std::int64_t flat, const Shape& shape);

// Maps a possibly negative dim into [0, ndim); throws ShapeError naming op otherwise.
std::int64_t normalize_dim(std::int64_t dim, std::int64_t ndim, const char* op);

// NumPy broadcasting: align shapes at the right; each pair of sizes must be equal or one
// of them 1. Throws ShapeError naming op and both shapes.
Shape broadcast_shapes(const Shape& a, const Shape& b, const char* op);

// Strides that read a tensor of (shape, strides) as if it had out_shape: broadcast dims get
// stride 0. out_shape must be a broadcast of shape.
Shape broadcast_strides(const Shape& shape, const Shape& strides, const Shape& out_shape);

// A tensor seen as (outer, size, inner) around dim: outer = Π of the sizes before dim,
// size = shape[dim], inner = Π of the sizes after it. Element (o, i, j) is at
// (o·size + i)·inner + j in a contiguous layout. dim must already be normalized; a 0-d shape
// is (1, 1, 1). The reductions, index_select, cat, softmax and cross_entropy all use it.
struct DimGeometry {
  std::int64_t outer = 1, size = 1, inner = 1;
};
DimGeometry dim_geometry(const Shape& shape, std::int64_t dim);

// Calls fn(i, offset) for every element in row-major order, where i counts 0..numel-1 and
// offset = sum(index[d] * strides[d]). The last dim is the inner loop.
template <typename Fn>
void for_each_strided(const Shape& shape, const Shape& strides, Fn&& fn) {
  const std::int64_t ndim = static_cast<std::int64_t>(shape.size());
  const std::int64_t n = shape_numel(shape);
  if (n == 0) return;
  if (ndim == 0) {
    fn(std::int64_t{0}, std::int64_t{0});
    return;
  }
  const std::int64_t inner = shape[ndim - 1], inner_stride = strides[ndim - 1];
  std::vector<std::int64_t> index(ndim, 0);
  std::int64_t base = 0;
  for (std::int64_t i = 0; i < n; i += inner) {
    for (std::int64_t j = 0; j < inner; ++j) fn(i + j, base + j * inner_stride);
    // advance the outer multi-index like an odometer
    for (std::int64_t d = ndim - 2; d >= 0; --d) {
      base += strides[d];
      if (++index[d] < shape[d]) break;
      base -= strides[d] * shape[d];
      index[d] = 0;
    }
  }
}

}  // namespace tapegrad
