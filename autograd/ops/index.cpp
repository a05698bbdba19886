// index.cpp — picking elements by index (index_select, embedding) and by mask (masked_fill, where).
// (o, k, i) below are the dims before, at and after the indexed dim; repeated indices add up.
//   index_select: out[o, k, i] = x[o, idx[k], i]      dx[o, idx[k], i] += dout[o, k, i]
//   embedding:    out[n, c] = weight[idx[n], c]       dweight[idx[n], c] += dout[n, c]
//   masked_fill:  out = mask ? value : x              dx = mask ? 0 : dout
//   where:        out = cond ? a : b                  da = sum_to_shape(cond ? dout : 0), db likewise
#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "../cpu/parallel.hpp"
#include "../grad_mode.hpp"
#include "../node.hpp"
#include "../ops.hpp"
#include "../shape.hpp"

namespace tapegrad {

namespace {

// Columns of dx owned by one thread in the scatter-add: 32 floats are two cache lines, so
// threads rarely share a line, and a row of C = 384 still splits into 12 tasks.
constexpr std::int64_t kColumnBlock = 32;

void check_int64_indices(const Tensor& indices, const char* op) {
  if (indices.dtype() != DType::int64)
    throw DTypeError(std::string(op) + ": indices must be int64, got " + dtype_name(indices.dtype()) +
                     " of shape " + shape_str(indices.shape()));
}

// Every index must lie in [0, rows); all are checked before anything is written.
void check_index_range(const std::int64_t* idx, std::int64_t n, std::int64_t rows, std::int64_t dim,
                       const Shape& shape, const char* op) {
  for (std::int64_t k = 0; k < n; ++k) {
    if (idx[k] >= 0 && idx[k] < rows) continue;
    const std::string valid =
        rows == 0 ? "none, the dim is empty" : "0.." + std::to_string(rows - 1);
    throw ValueError(std::string(op) + ": index " + std::to_string(idx[k]) + " is out of range for dim " +
                     std::to_string(dim) + " of size " + std::to_string(rows) + " (shape " +
                     shape_str(shape) + "; valid indices: " + valid + ")");
  }
}

// out[o, k, :] = x[o, idx[k], :] with x: (outer, size, inner) and out: (outer, K, inner),
// both contiguous. With outer = 1 this is the embedding lookup: one memcpy per token.
template <typename T>
void gather_rows_forward(T* out, const T* x, const std::int64_t* idx, DimGeometry g, std::int64_t K) {
  parallel_region_if(g.outer * K * g.inner > kParallelGrain, [&] {
#pragma omp for collapse(2) nowait
    for (std::int64_t o = 0; o < g.outer; ++o)
      for (std::int64_t k = 0; k < K; ++k)
        std::memcpy(out + (o * K + k) * g.inner, x + (o * g.size + idx[k]) * g.inner, g.inner * sizeof(T));
  });
}

// dx[o, idx[k], :] += dout[o, k, :] with dx zeroed beforehand. Repeated indices make several
// k add into the same row, so the work is split by (o, block of columns), not by k: each
// thread owns whole columns of dx and walks every k in order. No two threads write the same
// element (no data race, no atomics) and the sums are the same for any thread count.
template <typename T>
void scatter_rows_backward(T* dx, const T* dout, const std::int64_t* idx, DimGeometry g, std::int64_t K) {
  const std::int64_t blocks = (g.inner + kColumnBlock - 1) / kColumnBlock;
  parallel_region_if(g.outer * K * g.inner > kParallelGrain, [&] {
#pragma omp for nowait
    for (std::int64_t task = 0; task < g.outer * blocks; ++task) {
      const std::int64_t o = task / blocks, c0 = (task % blocks) * kColumnBlock;
      const std::int64_t c1 = std::min(c0 + kColumnBlock, g.inner);
      for (std::int64_t k = 0; k < K; ++k) {
        T* dst = dx + (o * g.size + idx[k]) * g.inner;
        const T* src = dout + (o * K + k) * g.inner;
        for (std::int64_t c = c0; c < c1; ++c) dst[c] += src[c];
      }
    }
  });
}

// dx[o, idx[k], i] += dout[o, k, i] into a gradient that already holds others' contributions,
// the rows of a repeated index summed first, in order: the same bits as scatter_rows_backward
// into zeros and then dx += that (the engine's accumulation), without the dense zeros.
template <typename T>
void scatter_rows_add_grouped(T* dx, const T* dout, const std::int64_t* idx, DimGeometry g, std::int64_t K) {
  std::vector<std::int64_t> order(static_cast<std::size_t>(K));  // k by index, equal indices in order
  for (std::int64_t k = 0; k < K; ++k) order[k] = k;
  std::stable_sort(order.begin(), order.end(), [&](std::int64_t a, std::int64_t b) { return idx[a] < idx[b]; });
  const std::int64_t blocks = (g.inner + kColumnBlock - 1) / kColumnBlock;
  parallel_region_if(g.outer * K * g.inner > kParallelGrain, [&] {
#pragma omp for nowait
    for (std::int64_t task = 0; task < g.outer * blocks; ++task) {
      const std::int64_t o = task / blocks, c0 = (task % blocks) * kColumnBlock;
      const std::int64_t width = std::min(c0 + kColumnBlock, g.inner) - c0;
      T sum[kColumnBlock];
      for (std::int64_t first = 0, last; first < K; first = last) {
        for (last = first + 1; last < K && idx[order[last]] == idx[order[first]]; ++last) {
        }
        const T* src = dout + (o * K + order[first]) * g.inner + c0;
        for (std::int64_t c = 0; c < width; ++c) sum[c] = src[c];
        for (std::int64_t m = first + 1; m < last; ++m) {
          src = dout + (o * K + order[m]) * g.inner + c0;
          for (std::int64_t c = 0; c < width; ++c) sum[c] += src[c];
        }
        T* dst = dx + (o * g.size + idx[order[first]]) * g.inner + c0;
        for (std::int64_t c = 0; c < width; ++c) dst[c] += sum[c];
      }
    }
  });
}

// The gradient of a gather: zeros of x's shape with dout scatter-added into the picked rows.
// An op of its own, so that it is differentiable in turn: its gradient is the gather of its
// gradient (the same rows picked again). When x is a leaf whose .grad() the engine lets this
// backward add into (grad_to_add_into: a tied embedding's table already holds the head's
// gradient), the rows go straight there and the gradient returned is undefined.
Tensor gather_rows_backward(const Tensor& dout, const Tensor& idx, const Shape& x_shape, DimGeometry g,
                            const char* op) {
  const Tensor dout_c = dout.contiguous();
  if (!should_record({dout}))
    if (const Tensor into = grad_to_add_into(0); into.defined() && into.shape() == x_shape &&
                                                       into.dtype() == dout.dtype()) {
      dispatch_floating(dout.dtype(), op, [&]<typename T>() {
        scatter_rows_add_grouped(into.data<T>(), dout_c.data<T>(), idx.data<std::int64_t>(), g, idx.numel());
      });
      return Tensor();
    }
  Tensor dx = zeros(x_shape, dout.dtype());
  dispatch_floating(dout.dtype(), op, [&]<typename T>() {
    scatter_rows_backward(dx.data<T>(), dout_c.data<T>(), idx.data<std::int64_t>(), g, idx.numel());
  });
  if (should_record({dout}))
    record(dx, "scatter_add_rows", {dout}, [idx, g, dout_shape = dout.shape()](const Tensor& grad) -> TensorList {
      const Tensor rows = index_select(grad.reshape({g.outer, g.size, g.inner}), 1, idx.reshape({-1}));
      return {rows.reshape(dout_shape)};
    }, DoubleBackward::supported, Saves::nothing);
  if (forward_rules_wanted()) record_forward(dx, [idx, x_shape, g, op](const TensorList& t) {  // linear: the op on the tangent
    return gather_rows_backward(t[0], idx, x_shape, g, op);
  });
  return dx;
}

// Offset of the first element of row r (rows = runs of the last dim of shape) in a tensor
// read through `strides` (broadcast dims have stride 0).
std::int64_t row_offset(std::int64_t r, const Shape& shape, const Shape& strides) {
  std::int64_t offset = 0;
  for (std::int64_t d = static_cast<std::int64_t>(shape.size()) - 2; d >= 0; --d) {
    offset += (r % shape[d]) * strides[d];
    r /= shape[d];
  }
  return offset;
}

// Calls body(r, inner) for each row r of `shape` (in parallel for big tensors); the row's
// elements are r * inner + j for j in [0, inner).
template <typename Body>
void for_each_row(const Shape& shape, Body body) {
  const std::int64_t n = shape_numel(shape);
  if (n == 0) return;
  const std::int64_t inner = shape.empty() ? 1 : shape.back(), rows = n / inner;
  parallel_region_if(n > kParallelGrain, [&] {
#pragma omp for nowait
    for (std::int64_t r = 0; r < rows; ++r) body(r, inner);
  });
}

std::int64_t last_stride(const Shape& strides) { return strides.empty() ? 0 : strides.back(); }

// out[i] = mask[i] != 0 ? value : src[i] over src's shape; mask broadcasts to it.
Tensor masked_fill_forward(const Tensor& src, const Tensor& mask, double value) {
  const Shape& shape = src.shape();
  const Shape ms = broadcast_strides(mask.shape(), mask.strides(), shape);
  Tensor out = Tensor::empty(shape, src.dtype());
  dispatch_all(src.dtype(), "masked_fill", [&]<typename T>() {
    dispatch_all(mask.dtype(), "masked_fill", [&]<typename M>() {
      const T* ps = src.data<T>();
      const M* pm = mask.data<M>();
      T* po = out.data<T>();
      const T fill = static_cast<T>(value);
      const std::int64_t is = last_stride(src.strides()), im = last_stride(ms);
      for_each_row(shape, [&](std::int64_t r, std::int64_t inner) {
        const std::int64_t os = row_offset(r, shape, src.strides()), om = row_offset(r, shape, ms);
        T* row = po + r * inner;
        for (std::int64_t j = 0; j < inner; ++j) row[j] = pm[om + j * im] != M(0) ? fill : ps[os + j * is];
      });
    });
  });
  return out;
}

// out = cond ? a : b over the broadcast shape, each input read through broadcast strides.
Tensor where_forward(const Tensor& cond, const Tensor& a, const Tensor& b, const Shape& shape) {
  const Shape sc = broadcast_strides(cond.shape(), cond.strides(), shape);
  const Shape sa = broadcast_strides(a.shape(), a.strides(), shape);
  const Shape sb = broadcast_strides(b.shape(), b.strides(), shape);
  Tensor out = Tensor::empty(shape, a.dtype());
  dispatch_all(a.dtype(), "where", [&]<typename T>() {
    dispatch_all(cond.dtype(), "where", [&]<typename M>() {
      const M* pc = cond.data<M>();
      const T* pa = a.data<T>();
      const T* pb = b.data<T>();
      T* po = out.data<T>();
      const std::int64_t ic = last_stride(sc), ia = last_stride(sa), ib = last_stride(sb);
      for_each_row(shape, [&](std::int64_t r, std::int64_t inner) {
        const std::int64_t oc = row_offset(r, shape, sc), oa = row_offset(r, shape, sa),
                           ob = row_offset(r, shape, sb);
        T* row = po + r * inner;
        for (std::int64_t j = 0; j < inner; ++j)
          row[j] = pc[oc + j * ic] != M(0) ? pa[oa + j * ia] : pb[ob + j * ib];
      });
    });
  });
  return out;
}

}  // namespace

Tensor index_select(const Tensor& x, std::int64_t dim, const Tensor& indices) {
  if (x.dim() == 0) throw ShapeError("index_select: x must have at least one dim, got a 0-d tensor");
  const std::int64_t d = normalize_dim(dim, x.dim(), "index_select");
  check_int64_indices(indices, "index_select");
  if (indices.dim() != 1)
    throw ShapeError("index_select: indices must be 1-d, got shape " + shape_str(indices.shape()));
  const Tensor idx = indices.detach().contiguous();
  const DimGeometry g = dim_geometry(x.shape(), d);  // x: (outer, size, inner) around d
  const std::int64_t K = idx.numel();
  check_index_range(idx.data<std::int64_t>(), K, g.size, d, x.shape(), "index_select");

  Shape out_shape = x.shape();
  out_shape[d] = K;
  Tensor out = Tensor::empty(out_shape, x.dtype());
  const Tensor xc = x.detach().contiguous();
  dispatch_all(x.dtype(), "index_select", [&]<typename T>() {
    gather_rows_forward(out.data<T>(), xc.data<T>(), idx.data<std::int64_t>(), g, K);
  });

  if (!should_record({x})) return out;
  record(out, "index_select", {x}, [idx, x_shape = x.shape(), g](const Tensor& dout) -> TensorList {
    return {gather_rows_backward(dout, idx, x_shape, g, "index_select")};
  }, DoubleBackward::supported, Saves::nothing);
  if (forward_rules_wanted()) record_forward(out, [d, idx](const TensorList& t) { return index_select(t[0], d, idx); });  // linear
  return out;
}

Tensor embedding(const Tensor& weight, const Tensor& indices) {
  // weight: (V, C), indices: (...) -> out: (..., C)
  if (weight.dim() != 2)
    throw ShapeError("embedding: weight must be 2-d (V, C), got shape " + shape_str(weight.shape()));
  check_int64_indices(indices, "embedding");
  const Tensor idx = indices.detach().contiguous();
  const Tensor w = weight.detach().contiguous();  // e.g. a transposed, tied weight
  const DimGeometry g = dim_geometry(weight.shape(), 0);  // (1, V, C)
  const std::int64_t N = idx.numel();
  check_index_range(idx.data<std::int64_t>(), N, g.size, 0, weight.shape(), "embedding");

  Shape out_shape = indices.shape();
  out_shape.push_back(g.inner);
  Tensor out = Tensor::empty(out_shape, weight.dtype());
  dispatch_all(weight.dtype(), "embedding", [&]<typename T>() {
    gather_rows_forward(out.data<T>(), w.data<T>(), idx.data<std::int64_t>(), g, N);
  });

  if (!should_record({weight})) return out;
  // Saves only the indices: the gradient does not depend on the weight's values.
  record(out, "embedding", {weight}, [idx, w_shape = weight.shape(), g](const Tensor& dout) -> TensorList {
    return {gather_rows_backward(dout, idx, w_shape, g, "embedding")};
  }, DoubleBackward::supported, Saves::nothing);
  if (forward_rules_wanted()) record_forward(out, [idx](const TensorList& t) { return embedding(t[0], idx); });  // linear in the weight
  return out;
}

Tensor masked_fill(const Tensor& x, const Tensor& mask, double value) {
  // The mask may have fewer dims, and size-1 dims, but it never makes the output bigger.
  bool fits = mask.dim() <= x.dim();
  for (std::int64_t i = 1; fits && i <= mask.dim(); ++i) {
    const std::int64_t m = mask.shape()[mask.dim() - i], s = x.shape()[x.dim() - i];
    fits = m == 1 || m == s;
  }
  if (!fits)
    throw ShapeError("masked_fill: mask of shape " + shape_str(mask.shape()) +
                     " cannot be broadcast to the shape of x " + shape_str(x.shape()));
  if (x.dtype() == DType::int64 && !(std::abs(value) < 0x1p63))
    throw ValueError("masked_fill: value " + std::to_string(value) + " does not fit in an int64 tensor");
  Tensor out = masked_fill_forward(x, mask, value);
  if (!should_record({x})) return out;
  // The backward is the op itself: masked positions get no gradient.
  record(out, "masked_fill", {x}, [mask = mask.detach()](const Tensor& dout) -> TensorList {
    if (is_grad_enabled()) return {masked_fill(dout, mask, 0.0)};  // recorded (create_graph)
    return {masked_fill_forward(dout, mask, 0.0)};
  }, DoubleBackward::supported, Saves::nothing);
  if (forward_rules_wanted()) record_forward(out, [mask = mask.detach()](const TensorList& t) { return masked_fill(t[0], mask, 0.0); });
  return out;
}

Tensor where(const Tensor& condition, const Tensor& a, const Tensor& b) {
  if (a.dtype() != b.dtype())
    throw DTypeError(std::string("where: a is ") + dtype_name(a.dtype()) + " " + shape_str(a.shape()) +
                     " but b is " + dtype_name(b.dtype()) + " " + shape_str(b.shape()) +
                     "; convert one with .to()");
  const Shape shape =
      broadcast_shapes(condition.shape(), broadcast_shapes(a.shape(), b.shape(), "where"), "where");
  Tensor out = where_forward(condition, a, b, shape);
  if (!should_record({a, b})) return out;
  const bool need_a = a.requires_grad(), need_b = b.requires_grad();
  // The condition gets no gradient; only a and b are inputs of the node.
  record(out, "where", {a, b},
         [cond = condition.detach(), sa = a.shape(), sb = b.shape(), need_a, need_b](
             const Tensor& dout) -> TensorList {
           const Tensor zero = scalar_tensor(0.0, dout.dtype());
           const bool recorded = is_grad_enabled();  // create_graph: the op itself, differentiable
           auto pick = [&](const Tensor& yes, const Tensor& no) {
             return recorded ? where(cond, yes, no) : where_forward(cond, yes, no, dout.shape());
           };
           Tensor da, db;
           if (need_a) da = sum_to_shape(pick(dout, zero), sa);
           if (need_b) db = sum_to_shape(pick(zero, dout), sb);
           return {da, db};
         }, DoubleBackward::supported, Saves::nothing);
  // forward: the tangent of whichever side the condition picks (zeros for a side without one)
  if (forward_rules_wanted()) record_forward(out, [cond = condition.detach(), shape](const TensorList& t) {
    const Tensor zero = scalar_tensor(0.0, (t[0].defined() ? t[0] : t[1]).dtype());
    return where(cond, t[0].defined() ? t[0] : zero, t[1].defined() ? t[1] : zero).contiguous();
  });
  return out;
}

}  // namespace tapegrad
