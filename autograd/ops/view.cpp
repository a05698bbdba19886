// view.cpp — ops that reinterpret the same storage with new shape/strides/offset (views),
// plus contiguous() and dtype conversion. No data moves unless stated.
//   reshape/view: dx = dout.reshape(x.shape)
//   transpose:    dx = dout.transpose(dim0, dim1)
//   permute:      dx = dout.permute(inverse permutation)
//   expand:       dx = sum_to_shape(dout, x.shape)
//   narrow/slice: dx = zeros(x.shape) with dout copied into the same window (slice_backward,
//                 an op itself so that a recorded backward can be differentiated again)
// Each is linear, so its forward rule (jvp) is the op itself applied to the tangent.
#include <algorithm>
#include <numeric>

#include "../node.hpp"
#include "../ops.hpp"
#include "../shape.hpp"

namespace tapegrad {

namespace {

// A tensor sharing x's storage, read through new shape, strides and offset.
Tensor make_view(const Tensor& x, Shape shape, Shape strides, std::int64_t offset) {
  auto impl = std::make_shared<TensorImpl>();
  impl->storage = x.impl().storage;
  impl->offset = offset;
  impl->shape = std::move(shape);
  impl->strides = std::move(strides);
  impl->dtype = x.dtype();
  return Tensor(std::move(impl));
}

// The view of elements start, start + step, ... (< end) along dim d (bounds already valid).
Tensor make_window(const Tensor& x, std::int64_t d, std::int64_t start, std::int64_t end, std::int64_t step) {
  Shape shape = x.shape(), strides = x.strides();
  shape[d] = (end - start + step - 1) / step;
  strides[d] *= step;
  return make_view(x, shape, strides, x.storage_offset() + start * x.strides()[d]);
}

// Resolves one -1 in a requested shape and checks that the element count matches.
Shape infer_shape(const Shape& requested, std::int64_t numel, const char* op, const Shape& from) {
  Shape shape = requested;
  std::int64_t known = 1, infer_at = -1;
  for (std::size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] == -1) {
      if (infer_at >= 0) throw ShapeError(std::string(op) + ": only one dim can be -1, got " + shape_str(requested));
      infer_at = static_cast<std::int64_t>(i);
    } else if (shape[i] < 0) {
      throw ShapeError(std::string(op) + ": invalid size in " + shape_str(requested));
    } else {
      known *= shape[i];
    }
  }
  if (infer_at >= 0) {
    if (known == 0 || numel % known != 0)
      throw ShapeError(std::string(op) + ": shape " + shape_str(requested) + " is invalid for input of shape " +
                       shape_str(from) + " (" + std::to_string(numel) + " elements)");
    shape[infer_at] = numel / known;
  } else if (known != numel) {
    throw ShapeError(std::string(op) + ": shape " + shape_str(requested) + " is invalid for input of shape " +
                     shape_str(from) + " (" + std::to_string(numel) + " elements)");
  }
  return shape;
}

Tensor reshape_view(const Tensor& x, const Shape& shape, const char* op) {
  Tensor out = make_view(x, shape, contiguous_strides(shape), x.storage_offset());
  if (should_record({x}))
    record(out, op, {x}, [in_shape = x.shape()](const Tensor& dout) -> TensorList {
      return {dout.reshape(in_shape)};
    }, DoubleBackward::supported, Saves::nothing);
  if (forward_rules_wanted()) record_forward(out, [shape](const TensorList& t) { return t[0].reshape(shape); });
  return out;
}

// The gradient of slice: zeros of the input's shape with dout in the window. An op of its
// own, so that it is differentiable in turn: its gradient is the same window of its gradient.
Tensor slice_backward(const Tensor& dout, const Shape& in_shape, std::int64_t d, std::int64_t start,
                      std::int64_t end, std::int64_t step) {
  Tensor dx = zeros(in_shape, dout.dtype());
  make_window(dx, d, start, end, step).copy_(dout);
  if (should_record({dout}))
    record(dx, "slice_backward", {dout}, [d, start, end, step](const Tensor& g) -> TensorList {
      return {slice(g, d, start, end, step)};
    }, DoubleBackward::supported, Saves::nothing);
  if (forward_rules_wanted()) record_forward(dx, [in_shape, d, start, end, step](const TensorList& t) {
    return slice_backward(t[0], in_shape, d, start, end, step);
  });
  return dx;
}

}  // namespace

Tensor reshape(const Tensor& x, const Shape& requested) {
  const Shape shape = infer_shape(requested, x.numel(), "reshape", x.shape());
  // A non-contiguous tensor is copied first (PyTorch can sometimes still view it; we keep
  // the rule simple: reshape views exactly when the input is contiguous).
  return reshape_view(x.contiguous(), shape, "reshape");
}

Tensor view(const Tensor& x, const Shape& requested) {
  const Shape shape = infer_shape(requested, x.numel(), "view", x.shape());
  if (!x.is_contiguous())
    throw ShapeError("view: the tensor of shape " + shape_str(x.shape()) + " with strides " +
                     shape_str(x.strides()) + " is not contiguous; use reshape() or contiguous() first");
  return reshape_view(x, shape, "view");
}

Tensor flatten(const Tensor& x, std::int64_t start_dim, std::int64_t end_dim) {
  if (x.dim() == 0) return x.reshape({1});
  const std::int64_t s = normalize_dim(start_dim, x.dim(), "flatten");
  const std::int64_t e = normalize_dim(end_dim, x.dim(), "flatten");
  if (s > e) throw ShapeError("flatten: start_dim " + std::to_string(start_dim) + " comes after end_dim " + std::to_string(end_dim));
  Shape shape(x.shape().begin(), x.shape().begin() + s);
  std::int64_t merged = 1;
  for (std::int64_t d = s; d <= e; ++d) merged *= x.shape()[d];
  shape.push_back(merged);
  shape.insert(shape.end(), x.shape().begin() + e + 1, x.shape().end());
  return x.reshape(shape);
}

Tensor unsqueeze(const Tensor& x, std::int64_t dim) {
  const std::int64_t d = normalize_dim(dim, x.dim() + 1, "unsqueeze");
  Shape shape = x.shape();
  shape.insert(shape.begin() + d, 1);
  return x.reshape(shape);
}

Tensor squeeze(const Tensor& x, std::int64_t dim) {
  const std::int64_t d = normalize_dim(dim, x.dim(), "squeeze");
  if (x.dim() == 0 || x.shape()[d] != 1) return x;
  Shape shape = x.shape();
  shape.erase(shape.begin() + d);
  return x.reshape(shape);
}

Tensor transpose(const Tensor& x, std::int64_t dim0, std::int64_t dim1) {
  const std::int64_t d0 = normalize_dim(dim0, x.dim(), "transpose");
  const std::int64_t d1 = normalize_dim(dim1, x.dim(), "transpose");
  Shape shape = x.shape(), strides = x.strides();
  std::swap(shape[d0], shape[d1]);
  std::swap(strides[d0], strides[d1]);
  Tensor out = make_view(x, shape, strides, x.storage_offset());
  if (should_record({x}))
    record(out, "transpose", {x}, [d0, d1](const Tensor& dout) -> TensorList {
      return {transpose(dout, d0, d1)};
    }, DoubleBackward::supported, Saves::nothing);
  if (forward_rules_wanted()) record_forward(out, [d0, d1](const TensorList& t) { return transpose(t[0], d0, d1); });
  return out;
}

Tensor permute(const Tensor& x, const Shape& dims) {
  const std::int64_t n = x.dim();
  if (static_cast<std::int64_t>(dims.size()) != n)
    throw ShapeError("permute: " + shape_str(dims) + " is not a permutation of the " + std::to_string(n) +
                     " dims of shape " + shape_str(x.shape()));
  Shape perm(n), inverse(n, -1), shape(n), strides(n);
  for (std::int64_t i = 0; i < n; ++i) {
    perm[i] = normalize_dim(dims[i], n, "permute");
    if (inverse[perm[i]] != -1)
      throw ShapeError("permute: dim " + std::to_string(dims[i]) + " repeated in " + shape_str(dims));
    inverse[perm[i]] = i;
    shape[i] = x.shape()[perm[i]];
    strides[i] = x.strides()[perm[i]];
  }
  Tensor out = make_view(x, shape, strides, x.storage_offset());
  if (should_record({x}))
    record(out, "permute", {x}, [inverse](const Tensor& dout) -> TensorList {
      return {permute(dout, inverse)};
    }, DoubleBackward::supported, Saves::nothing);
  if (forward_rules_wanted()) record_forward(out, [perm](const TensorList& t) { return permute(t[0], perm); });
  return out;
}

Tensor expand(const Tensor& x, const Shape& requested) {
  const std::int64_t n = static_cast<std::int64_t>(requested.size()), lead = n - x.dim();
  if (lead < 0)
    throw ShapeError("expand: cannot expand shape " + shape_str(x.shape()) + " to fewer dims " + shape_str(requested));
  Shape shape(n), strides(n, 0);
  for (std::int64_t d = 0; d < n; ++d) {
    const std::int64_t want = requested[d];
    if (d < lead) {
      if (want < 0) throw ShapeError("expand: -1 is not allowed for a new leading dim in " + shape_str(requested));
      shape[d] = want;
      continue;
    }
    const std::int64_t have = x.shape()[d - lead];
    if (want == -1 || want == have) {
      shape[d] = have;
      strides[d] = x.strides()[d - lead];
    } else if (have == 1) {
      shape[d] = want;  // stride 0: every index reads the one element
    } else {
      throw ShapeError("expand: cannot expand shape " + shape_str(x.shape()) + " to " + shape_str(requested) +
                       " (dim " + std::to_string(d) + ": " + std::to_string(have) + " is not 1)");
    }
  }
  Tensor out = make_view(x, shape, strides, x.storage_offset());
  if (should_record({x}))
    record(out, "expand", {x}, [in_shape = x.shape()](const Tensor& dout) -> TensorList {
      return {sum_to_shape(dout, in_shape)};
    }, DoubleBackward::supported, Saves::nothing);
  if (forward_rules_wanted()) record_forward(out, [shape](const TensorList& t) { return expand(t[0], shape); });
  return out;
}

Tensor contiguous(const Tensor& x) {
  if (x.is_contiguous()) return x;
  Tensor out = Tensor::empty(x.shape(), x.dtype());
  out.copy_(x);
  if (should_record({x}))
    record(out, "contiguous", {x}, [](const Tensor& dout) -> TensorList { return {dout}; }, DoubleBackward::supported, Saves::nothing);
  if (forward_rules_wanted()) record_forward(out, [](const TensorList& t) { return contiguous(t[0]); });
  return out;
}

Tensor narrow(const Tensor& x, std::int64_t dim, std::int64_t start, std::int64_t length) {
  const std::int64_t d = normalize_dim(dim, x.dim(), "narrow");
  const std::int64_t size = x.shape()[d];
  if (start < 0) start += size;
  if (start < 0 || length < 0 || start + length > size)
    throw ShapeError("narrow: window [" + std::to_string(start) + ", " + std::to_string(start + length) +
                     ") does not fit in dim " + std::to_string(d) + " of size " + std::to_string(size) +
                     " (shape " + shape_str(x.shape()) + ")");
  return slice(x, d, start, start + length, 1);
}

Tensor select(const Tensor& x, std::int64_t dim, std::int64_t index) {
  if (x.dim() == 0) throw ShapeError("select: a 0-d tensor has no dim to index (x[" + std::to_string(index) + "])");
  const std::int64_t d = normalize_dim(dim, x.dim(), "select");
  const std::int64_t size = x.shape()[d];
  if (index < -size || index >= size)
    throw ShapeError("select: index " + std::to_string(index) + " is out of range for dim " + std::to_string(d) + " of size " +
                     std::to_string(size) + " (shape " + shape_str(x.shape()) + ")");
  return squeeze(narrow(x, d, index < 0 ? index + size : index, 1), d);
}

Tensor slice(const Tensor& x, std::int64_t dim, std::int64_t start, std::int64_t end, std::int64_t step) {
  const std::int64_t d = normalize_dim(dim, x.dim(), "slice");
  if (step <= 0) throw ValueError("slice: step must be positive, got " + std::to_string(step));
  const std::int64_t size = x.shape()[d];
  // Python's rules: negative indices count from the end, out-of-range bounds clamp.
  if (start < 0) start += size;
  if (end < 0) end += size;
  start = std::clamp<std::int64_t>(start, 0, size);
  end = std::clamp<std::int64_t>(end, start, size);
  Tensor out = make_window(x, d, start, end, step);
  if (should_record({x}))
    record(out, "slice", {x}, [in_shape = x.shape(), d, start, end, step](const Tensor& dout) -> TensorList {
      return {slice_backward(dout, in_shape, d, start, end, step)};
    }, DoubleBackward::supported, Saves::nothing);
  if (forward_rules_wanted()) record_forward(out, [d, start, end, step](const TensorList& t) { return slice(t[0], d, start, end, step); });
  return out;
}

Tensor to_dtype(const Tensor& x, DType dtype) {
  if (x.dtype() == dtype) return x;
  if (x.requires_grad() && !is_floating(dtype))
    throw DTypeError(std::string("to: a tensor that requires grad cannot become ") + dtype_name(dtype));
  Tensor out = Tensor::empty(x.shape(), dtype);
  out.copy_(x);
  if (should_record({x}))
    record(out, "to", {x}, [from = x.dtype()](const Tensor& dout) -> TensorList { return {dout.to(from)}; },
           DoubleBackward::supported, Saves::nothing);
  if (forward_rules_wanted()) record_forward(out, [dtype](const TensorList& t) { return t[0].to(dtype); });
  return out;
}

}  // namespace tapegrad
