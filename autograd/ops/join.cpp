// join.cpp — joining tensors along a dim (cat, stack) and cutting one into views (split, chunk).
//   cat:   out = [x_0 | x_1 | ... ] along dim;   dx_k = dout.narrow(dim, offset_k, size_k)
//   stack: cat of unsqueeze(x_k, dim)             (composed, no backward of its own)
//   split/chunk: narrow() views                   (composed: narrow's backward pads with zeros)
// cat moves data for any dtype (int64 included); it copies, it never returns a view.
#include <algorithm>
#include <cstring>

#include "../cpu/parallel.hpp"
#include "../node.hpp"
#include "../ops.hpp"
#include "../shape.hpp"

namespace tapegrad {

namespace {

std::vector<Shape> input_shapes(const TensorList& tensors) {
  std::vector<Shape> shapes;
  for (const Tensor& t : tensors) shapes.push_back(t.shape());
  return shapes;
}

// Checks the inputs of cat: a non-empty list, one dtype, and equal sizes
// in every dim but `dim`. Returns dim normalized against the first tensor's rank.
std::int64_t check_cat_inputs(const TensorList& tensors, std::int64_t dim, const char* op) {
  if (tensors.empty()) throw ShapeError(std::string(op) + ": expected a non-empty list of tensors");
  const Tensor& first = tensors[0];
  if (first.dim() == 0)
    throw ShapeError(std::string(op) + ": zero-dimensional tensors cannot be concatenated; "
                     "unsqueeze them or use stack()");
  const std::int64_t d = normalize_dim(dim, first.dim(), op);
  for (std::size_t k = 1; k < tensors.size(); ++k) {
    const Tensor& t = tensors[k];
    if (t.dtype() != first.dtype())
      throw DTypeError(std::string(op) + ": tensor 0 is " + dtype_name(first.dtype()) + " but tensor " +
                       std::to_string(k) + " is " + dtype_name(t.dtype()) + "; convert one with .to()");
    bool fits = t.dim() == first.dim();
    for (std::int64_t i = 0; fits && i < first.dim(); ++i)
      if (i != d && t.shape()[i] != first.shape()[i]) fits = false;
    if (!fits)
      throw ShapeError(std::string(op) + ": tensor " + std::to_string(k) + " has shape " +
                       shape_str(t.shape()) + " but tensor 0 has shape " + shape_str(first.shape()) +
                       "; sizes must match in every dim except dim " + std::to_string(d));
  }
  return d;
}

// Copies one contiguous input, seen as (outer, rows) with rows = size_k * inner, into the
// window [offset, offset + rows) of each row of the output, seen as (outer, out_rows).
template <typename T>
void cat_copy(T* out, const T* x, std::int64_t outer, std::int64_t rows, std::int64_t out_rows,
              std::int64_t offset) {
  parallel_region_if(outer * rows > kParallelGrain, [&] {
#pragma omp for nowait
    for (std::int64_t o = 0; o < outer; ++o)
      std::memcpy(out + o * out_rows + offset, x + o * rows, rows * sizeof(T));
  });
}

}  // namespace

Tensor cat(const TensorList& tensors, std::int64_t dim) {
  const std::int64_t d = check_cat_inputs(tensors, dim, "cat");
  Shape out_shape = tensors[0].shape();
  out_shape[d] = 0;
  for (const Tensor& t : tensors) out_shape[d] += t.shape()[d];

  // out as (outer, size, inner) around d: inner elements make one "element" of dim d.
  const DimGeometry g = dim_geometry(out_shape, d);

  Tensor out = Tensor::empty(out_shape, tensors[0].dtype());
  dispatch_all(out.dtype(), "cat", [&]<typename T>() {
    std::int64_t offset = 0;  // where the current input starts along dim d
    for (const Tensor& t : tensors) {
      const Tensor tc = t.detach().contiguous();  // strided inputs are copied once first
      cat_copy(out.data<T>(), tc.data<T>(), g.outer, t.shape()[d] * g.inner, g.size * g.inner,
               offset * g.inner);
      offset += t.shape()[d];
    }
  });

  if (!should_record(tensors)) return out;
  std::vector<bool> needs_grad;
  Shape sizes;  // size of each input along d
  for (const Tensor& t : tensors) {
    needs_grad.push_back(t.requires_grad());
    sizes.push_back(t.shape()[d]);
  }
  record(out, "cat", tensors, [d, needs_grad, sizes](const Tensor& dout) -> TensorList {
    TensorList dxs(sizes.size());
    std::int64_t offset = 0;
    for (std::size_t k = 0; k < sizes.size(); ++k) {
      // A contiguous copy rather than a view of dout: the piece is a fresh gradient that
      // the next backward can read as a plain buffer.
      if (needs_grad[k]) dxs[k] = narrow(dout, d, offset, sizes[k]).contiguous();
      offset += sizes[k];
    }
    return dxs;
  }, DoubleBackward::supported, Saves::nothing);
  // forward: the tangents joined the same way, zeros for an input without one
  if (forward_rules_wanted()) record_forward(out, [d, shapes = input_shapes(tensors), dtype = out.dtype()](const TensorList& t) {
    TensorList pieces;
    for (std::size_t k = 0; k < t.size(); ++k) pieces.push_back(t[k].defined() ? t[k] : zeros(shapes[k], dtype));
    return cat(pieces, d);
  });
  return out;
}

Tensor stack(const TensorList& tensors, std::int64_t dim) {
  if (tensors.empty()) throw ShapeError("stack: expected a non-empty list of tensors");
  for (std::size_t k = 1; k < tensors.size(); ++k)
    if (tensors[k].shape() != tensors[0].shape())
      throw ShapeError("stack: tensor " + std::to_string(k) + " has shape " + shape_str(tensors[k].shape()) +
                       " but tensor 0 has shape " + shape_str(tensors[0].shape()) +
                       "; stack needs equal shapes");
  const std::int64_t d = normalize_dim(dim, tensors[0].dim() + 1, "stack");
  TensorList unsqueezed;
  unsqueezed.reserve(tensors.size());
  for (const Tensor& t : tensors) unsqueezed.push_back(unsqueeze(t, d));
  return cat(unsqueezed, d);
}

TensorList split(const Tensor& x, std::int64_t split_size, std::int64_t dim) {
  if (x.dim() == 0) throw ShapeError("split: a zero-dimensional tensor cannot be split");
  const std::int64_t d = normalize_dim(dim, x.dim(), "split");
  if (split_size <= 0)
    throw ValueError("split: split_size must be positive, got " + std::to_string(split_size));
  const std::int64_t size = x.shape()[d];
  TensorList pieces;
  // An empty dim still gives one (empty) piece, as torch.split.
  for (std::int64_t start = 0; start < size || (size == 0 && pieces.empty()); start += split_size)
    pieces.push_back(narrow(x, d, start, std::min(split_size, size - start)));
  return pieces;
}

TensorList chunk(const Tensor& x, std::int64_t chunks, std::int64_t dim) {
  if (x.dim() == 0) throw ShapeError("chunk: a zero-dimensional tensor cannot be chunked");
  const std::int64_t d = normalize_dim(dim, x.dim(), "chunk");
  if (chunks <= 0) throw ValueError("chunk: chunks must be positive, got " + std::to_string(chunks));
  const std::int64_t size = x.shape()[d];
  if (size == 0) {  // as torch.chunk: `chunks` empty pieces
    TensorList pieces;
    for (std::int64_t k = 0; k < chunks; ++k) pieces.push_back(narrow(x, d, 0, 0));
    return pieces;
  }
  // ceil(size / chunks) per piece, so there may be fewer than `chunks` pieces (as torch.chunk).
  return split(x, (size + chunks - 1) / chunks, d);
}

}  // namespace tapegrad
