// reduce.cpp — sum, mean, max, argmax, var over chosen dims, and sum_to_shape.
//
// Every reduction over one dim views the contiguous input as (outer, R, inner) (dim_geometry
// in shape.hpp), where R is the reduced dim, outer the dims before it and inner the dims
// after: out[o, i] is a
// reduction of x[o, 0..R-1, i]. Several dims are reduced one after the other.
//   sum:  dx = dout broadcast back over the reduced dims
//   mean: composed as sum · (1/N)
//   max:  dx = dout at the (first) argmax, 0 elsewhere (recorded: dout times a constant mask)
//   var:  composed as sum((x - mean)²) / (N - correction)
#include <algorithm>
#include <limits>

#include <omp.h>

#include "../cpu/parallel.hpp"
#include "../grad_mode.hpp"
#include "../node.hpp"
#include "../ops.hpp"
#include "../shape.hpp"

namespace tapegrad {

namespace {

// Columns that sum_one_dim adds at a time in registers: 8 vectors of 64 bytes.
template <typename T>
constexpr std::int64_t kSumColumns = 512 / sizeof(T);

// Sum over one dim, keeping it as size 1. Accumulates in double: float32 sums over long rows
// (a loss over thousands of tokens) lose digits otherwise.
Tensor sum_one_dim(const Tensor& x, std::int64_t dim) {
  Tensor xc = x.contiguous();
  Shape out_shape = xc.shape();
  out_shape[dim] = 1;
  Tensor out = Tensor::empty(out_shape, x.dtype());
  const DimGeometry g = dim_geometry(xc.shape(), dim);
  // int64 too: a count of comparisons, sum(eq(predicted, targets)), as PyTorch sums bools;
  // the double accumulator is exact below 2^53
  dispatch_all(x.dtype(), "sum", [&]<typename T>() {
    const T* px = xc.data<T>();
    T* po = out.data<T>();
    if (g.inner == 1) {  // reduce along contiguous rows
      parallel_region_if(g.outer * g.size > kParallelGrain, [&] {
#pragma omp for nowait
        for (std::int64_t o = 0; o < g.outer; ++o) {
          const T* row = px + o * g.size;
          double acc = 0;
          for (std::int64_t r = 0; r < g.size; ++r) acc += row[r];
          po[o] = static_cast<T>(acc);
        }
      });
    } else {  // add rows of length inner: vectorizes along inner
      // The threads share the work by (o, stripe of columns), not by o alone: a bias's gradient,
      // the sum over the rows of one (rows, features) matrix, has outer = 1 and ran on one
      // thread. Each column still adds its rows in order, so the bits do not depend on the split.
      const bool parallel = g.outer * g.size * g.inner > kParallelGrain;
      const std::int64_t threads = parallel ? omp_get_max_threads() : 1;
      const std::int64_t stripes = g.outer >= threads ? 1 : (threads + g.outer - 1) / g.outer;
      const std::int64_t width = ((g.inner + stripes - 1) / stripes + 15) / 16 * 16;  // whole vectors
      parallel_region_if(parallel, [&] {
#pragma omp for nowait
        for (std::int64_t task = 0; task < g.outer * stripes; ++task) {
          const std::int64_t o = task / stripes, i0 = std::min(task % stripes * width, g.inner);
          const std::int64_t i1 = std::min(i0 + width, g.inner);
          T* dst = po + o * g.inner;
          const T* rows = px + o * g.size * g.inner;
          // kSumColumns columns at a time, their sums kept in registers through all the rows.
          // (Added into dst instead, each row's loads of the sums waited on the row before's
          // stores.) Each column still adds its rows in order from 0: the same bits.
          std::int64_t i = i0;
          for (; i + kSumColumns<T> <= i1; i += kSumColumns<T>) {
            T acc[kSumColumns<T>] = {};
            for (std::int64_t r = 0; r < g.size; ++r) {
              const T* src = rows + r * g.inner + i;
              for (std::int64_t l = 0; l < kSumColumns<T>; ++l) acc[l] += src[l];
            }
            std::copy(acc, acc + kSumColumns<T>, dst + i);
          }
          std::fill(dst + i, dst + i1, T(0));  // the last columns, fewer than kSumColumns
          for (std::int64_t r = 0; r < g.size && i < i1; ++r) {
            const T* src = rows + r * g.inner;
#pragma omp simd
            for (std::int64_t j = i; j < i1; ++j) dst[j] += src[j];
          }
        }
      });
    }
  });
  return out;
}

// Sorted, unique, non-negative dims; empty means all dims.
std::vector<std::int64_t> normalize_dims(const std::vector<std::int64_t>& dims, std::int64_t ndim,
                                         const char* op) {
  std::vector<std::int64_t> out;
  if (dims.empty()) {
    for (std::int64_t d = 0; d < ndim; ++d) out.push_back(d);
    return out;
  }
  for (std::int64_t d : dims) out.push_back(normalize_dim(d, ndim, op));
  std::sort(out.begin(), out.end());
  if (std::adjacent_find(out.begin(), out.end()) != out.end())
    throw ShapeError(std::string(op) + ": dim repeated in the list of dims to reduce");
  return out;
}

Shape reduced_shape(const Shape& shape, const std::vector<std::int64_t>& dims, bool keepdim) {
  Shape out;
  for (std::int64_t d = 0; d < static_cast<std::int64_t>(shape.size()); ++d) {
    const bool reduced = std::find(dims.begin(), dims.end(), d) != dims.end();
    if (!reduced) out.push_back(shape[d]);
    else if (keepdim) out.push_back(1);
  }
  return out;
}

Tensor sum_impl(const Tensor& x, const std::vector<std::int64_t>& dims, bool keepdim) {
  Tensor out = x;
  for (std::int64_t d : dims) out = sum_one_dim(out, d);
  if (out.is_same(x)) out = x.clone();  // a 0-d input: its sum is a copy of it
  return out.reshape(reduced_shape(x.shape(), dims, keepdim));
}

}  // namespace

Tensor sum(const Tensor& x, const std::vector<std::int64_t>& dims_in, bool keepdim) {
  const std::vector<std::int64_t> dims = normalize_dims(dims_in, x.dim(), "sum");
  Tensor out;
  {
    // The kernels above build the result from internal reshapes; record one "sum" node.
    NoGradGuard no_grad;
    out = sum_impl(x, dims, keepdim);
  }
  if (!should_record({x})) return out;
  record(out, "sum", {x},
         [shape = x.shape(), keep_shape = reduced_shape(x.shape(), dims, true)](
             const Tensor& dout) -> TensorList {
           return {expand(dout.reshape(keep_shape), shape).contiguous()};
         }, DoubleBackward::supported, Saves::nothing);
  if (forward_rules_wanted()) record_forward(out, [dims, keepdim](const TensorList& t) { return sum(t[0], dims, keepdim); });  // linear
  return out;
}

Tensor sum(const Tensor& x) { return sum(x, {}, false); }

Tensor mean(const Tensor& x, const std::vector<std::int64_t>& dims_in, bool keepdim) {
  const std::vector<std::int64_t> dims = normalize_dims(dims_in, x.dim(), "mean");
  std::int64_t n = 1;
  for (std::int64_t d : dims) n *= x.shape()[d];
  if (n == 0) throw ShapeError("mean: cannot average over zero elements, shape " + shape_str(x.shape()));
  return mul(sum(x, dims, keepdim), 1.0 / static_cast<double>(n));
}

Tensor mean(const Tensor& x) { return mean(x, {}, false); }

namespace {

// Max and its first index over one dim, as (values, int64 indices) with the dim kept.
std::pair<Tensor, Tensor> max_one_dim(const Tensor& x, std::int64_t dim, const char* op) {
  if (x.dim() > 0 && x.shape()[dim] == 0)
    throw ShapeError(std::string(op) + ": cannot reduce an empty dim, shape " + shape_str(x.shape()));
  Tensor xc = x.contiguous();
  Shape out_shape = xc.shape();
  if (!out_shape.empty()) out_shape[dim] = 1;
  Tensor values = Tensor::empty(out_shape, x.dtype());
  Tensor indices = Tensor::empty(out_shape, DType::int64);
  const DimGeometry g = dim_geometry(xc.shape(), dim);  // a 0-d x is (1, 1, 1)
  dispatch_floating(x.dtype(), op, [&]<typename T>() {
    const T* px = xc.data<T>();
    T* pv = values.data<T>();
    std::int64_t* pi = indices.data<std::int64_t>();
    parallel_region_if(g.outer * g.size * g.inner > kParallelGrain, [&] {
#pragma omp for nowait
      for (std::int64_t o = 0; o < g.outer; ++o)
        for (std::int64_t i = 0; i < g.inner; ++i) {
          const T* src = px + o * g.size * g.inner + i;
          T best = src[0];
          std::int64_t best_r = 0;
          for (std::int64_t r = 1; r < g.size; ++r) {
            const T v = src[r * g.inner];
            // NaN wins (propagates), as in PyTorch.
            if (v > best || (v != v && best == best)) {
              best = v;
              best_r = r;
            }
          }
          pv[o * g.inner + i] = best;
          pi[o * g.inner + i] = best_r;
        }
    });
  });
  return {values, indices};
}

}  // namespace

Tensor max(const Tensor& x, std::int64_t dim_in, bool keepdim) {
  const std::int64_t dim = normalize_dim(dim_in, x.dim(), "max");
  auto [values, indices] = max_one_dim(x, dim, "max");
  const Shape out_shape = reduced_shape(x.shape(), {dim}, keepdim);
  Tensor out = values.reshape(out_shape);
  if (!should_record({x})) return out;
  record(out, "max", {x},
         [indices, dim, shape = x.shape()](const Tensor& dout) -> TensorList {
           // Scatter dout into the argmax positions (into a zero tensor of x's shape).
           const bool recorded = is_grad_enabled();
           const DimGeometry g = dim_geometry(shape, dim);
           Tensor dx = zeros(shape, dout.dtype());
           const Tensor d = recorded ? ones(dout.shape(), dout.dtype()) : dout.contiguous();
           dispatch_floating(dx.dtype(), "max backward", [&]<typename T>() {
             T* pdx = dx.data<T>();
             const T* pd = d.data<T>();
             const std::int64_t* pi = indices.data<std::int64_t>();
             for (std::int64_t o = 0; o < g.outer; ++o)
               for (std::int64_t i = 0; i < g.inner; ++i)
                 pdx[(o * g.size + pi[o * g.inner + i]) * g.inner + i] = pd[o * g.inner + i];
           });
           if (!recorded) return {dx};
           // Recorded: dx = dout (broadcast over dim) · the constant one-hot mask of the argmax.
           return {mul(expand(dout.reshape(reduced_shape(shape, {dim}, true)), shape), dx)};
         }, DoubleBackward::supported, Saves::nothing);
  // forward: the tangent at each argmax (the max moves with the element that holds it)
  if (forward_rules_wanted()) record_forward(out, [indices, dim, out_shape](const TensorList& t) {
    const Tensor tc = t[0].contiguous();
    const DimGeometry g = dim_geometry(tc.shape(), dim);
    Tensor dy = Tensor::empty(out_shape, tc.dtype());
    dispatch_floating(tc.dtype(), "max forward rule", [&]<typename T>() {
      const T* pt = tc.data<T>();
      T* py = dy.data<T>();
      const std::int64_t* pi = indices.data<std::int64_t>();
      for (std::int64_t o = 0; o < g.outer; ++o)
        for (std::int64_t i = 0; i < g.inner; ++i)
          py[o * g.inner + i] = pt[(o * g.size + pi[o * g.inner + i]) * g.inner + i];
    });
    return dy;
  });
  return out;
}

Tensor max(const Tensor& x) { return max(x.reshape({-1}), 0, false); }

Tensor argmax(const Tensor& x, std::int64_t dim_in, bool keepdim) {
  const std::int64_t dim = normalize_dim(dim_in, x.dim(), "argmax");
  return max_one_dim(x, dim, "argmax").second.reshape(reduced_shape(x.shape(), {dim}, keepdim));
}

Tensor argmax(const Tensor& x) { return argmax(x.reshape({-1}), 0, false); }

Tensor var(const Tensor& x, const std::vector<std::int64_t>& dims_in, std::int64_t correction,
           bool keepdim) {
  const std::vector<std::int64_t> dims = normalize_dims(dims_in, x.dim(), "var");
  std::int64_t n = 1;
  for (std::int64_t d : dims) n *= x.shape()[d];
  if (n - correction <= 0)
    throw ShapeError("var: " + std::to_string(n) + " elements with correction " +
                     std::to_string(correction) + " leave no degrees of freedom, shape " +
                     shape_str(x.shape()));
  Tensor centered = sub(x, mean(x, dims, true));
  return div(sum(mul(centered, centered), dims, keepdim), static_cast<double>(n - correction));
}

Tensor sum_to_shape(const Tensor& x, const Shape& shape) {
  if (x.shape() == shape) return x;
  const std::int64_t lead = x.dim() - static_cast<std::int64_t>(shape.size());
  if (lead < 0)
    throw ShapeError("sum_to_shape: cannot reduce shape " + shape_str(x.shape()) + " to the larger " +
                     shape_str(shape));
  std::vector<std::int64_t> dims;
  for (std::int64_t d = 0; d < x.dim(); ++d)
    if (d < lead || (shape[d - lead] == 1 && x.shape()[d] != 1)) dims.push_back(d);
  return sum(x, dims, true).reshape(shape);
}

}  // namespace tapegrad
