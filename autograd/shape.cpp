// shape.cpp — element counts, contiguous strides, dim normalization, broadcasting rules and
// the (outer, size, inner) geometry around a dim.
#include "shape.hpp"

#include <algorithm>
#include <string>

#include "errors.hpp"

namespace tapegrad {

std::int64_t shape_numel(const Shape& shape) {
  std::int64_t n = 1;
  for (std::int64_t s : shape) n *= s;
  return n;
}

Shape contiguous_strides(const Shape& shape) {
  Shape strides(shape.size());
  std::int64_t stride = 1;
  for (std::size_t i = shape.size(); i-- > 0;) {
    strides[i] = stride;
    stride *= shape[i];
  }
  return strides;
}

Shape unravel_index(std::int64_t flat, const Shape& shape) {
  Shape index(shape.size());
  for (std::size_t d = shape.size(); d-- > 0;) {
    index[d] = flat % shape[d];
    flat /= shape[d];
  }
  return index;
}

std::int64_t normalize_dim(std::int64_t dim, std::int64_t ndim, const char* op) {
  const std::int64_t lo = ndim == 0 ? -1 : -ndim, hi = ndim == 0 ? 0 : ndim - 1;
  if (dim < lo || dim > hi)
    throw ShapeError(std::string(op) + ": dim " + std::to_string(dim) + " is out of range for a " +
                     std::to_string(ndim) + "-d tensor (expected " + std::to_string(lo) + ".." +
                     std::to_string(hi) + ")");
  if (ndim == 0) return 0;
  return dim < 0 ? dim + ndim : dim;
}

Shape broadcast_shapes(const Shape& a, const Shape& b, const char* op) {
  const std::size_t n = std::max(a.size(), b.size());
  Shape out(n);
  for (std::size_t i = 0; i < n; ++i) {  // i counts from the right
    const std::int64_t sa = i < a.size() ? a[a.size() - 1 - i] : 1;
    const std::int64_t sb = i < b.size() ? b[b.size() - 1 - i] : 1;
    if (sa != sb && sa != 1 && sb != 1)
      throw ShapeError(std::string(op) + ": shapes " + shape_str(a) + " and " + shape_str(b) +
                       " cannot be broadcast together (dim -" + std::to_string(i + 1) + ": " +
                       std::to_string(sa) + " vs " + std::to_string(sb) + ")");
    out[n - 1 - i] = sa == 1 ? sb : sa;
  }
  return out;
}

DimGeometry dim_geometry(const Shape& shape, std::int64_t dim) {
  DimGeometry g;
  for (std::int64_t d = 0; d < static_cast<std::int64_t>(shape.size()); ++d) {
    if (d < dim) g.outer *= shape[d];
    else if (d == dim) g.size = shape[d];
    else g.inner *= shape[d];
  }
  return g;
}

Shape broadcast_strides(const Shape& shape, const Shape& strides, const Shape& out_shape) {
  const std::size_t n = out_shape.size(), lead = n - shape.size();
  Shape out(n, 0);
  for (std::size_t d = lead; d < n; ++d)
    out[d] = shape[d - lead] == 1 ? 0 : strides[d - lead];
  return out;
}

}  // namespace tapegrad
