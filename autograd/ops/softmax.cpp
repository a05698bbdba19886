// softmax.cpp — softmax and log_softmax along one dim, numerically stable, fused backward.
//
//   softmax:     y = exp(x - max) / Σ exp(x - max)          dx = y ⊙ (dout − Σ(dout ⊙ y))
//   log_softmax: y = x - max - log Σ exp(x - max)           dx = dout − exp(y) · Σ dout
// Subtracting the row max keeps exp() ≤ 1, so logits of 1e4 do not overflow. The input is
// viewed as (outer, C, inner) with C the softmax dim (dim_geometry): a row is the C
// elements x[o, :, i], `inner` apart in memory (1 when dim is the last one: the fast path).
// Both backwards read only the saved output y, never x.
#include <cmath>

#include "../cpu/parallel.hpp"
#include "../cpu/vec_math.hpp"
#include "../grad_mode.hpp"
#include "../node.hpp"
#include "../ops.hpp"
#include "../shape.hpp"
#include "rows.hpp"

namespace tapegrad {

namespace {

// Calls row_fn(base) with the offset of the first element of every row, in parallel over rows.
template <typename RowFn>
void for_each_row(const DimGeometry& g, RowFn row_fn) {
  const std::int64_t rows = row_count(g);
  parallel_region_if(rows * g.size > kParallelGrain, [&] {
#pragma omp for nowait
    for (std::int64_t r = 0; r < rows; ++r) {
      const std::int64_t o = r / g.inner, i = r % g.inner;
      row_fn(o * g.size * g.inner + i);
    }
  });
}


// ---- kernels: x, y, dout, dx are contiguous buffers of outer·C·inner elements

template <typename T>
void softmax_forward(T* y, const T* x, const DimGeometry& g, bool log_space) {
  with_layout(g, [&]<bool kContiguous>() {
    const std::int64_t s = kContiguous ? 1 : g.inner, C = g.size;
    for_each_row(g, [&](std::int64_t base) {
      const T* xr = x + base;
      T* yr = y + base;
      T row_max = -INFINITY;
#pragma omp simd reduction(max : row_max)
      for (std::int64_t c = 0; c < C; ++c) row_max = xr[c * s] > row_max ? xr[c * s] : row_max;
      // In double: a float32 sum over 50k columns loses digits otherwise. The simd reductions
      // add in a fixed vector order (the same on every run and for every thread count), and
      // vec::exp vectorizes where std::exp would be one library call per element.
      double sum = 0;
      if (log_space) {
#pragma omp simd reduction(+ : sum)
        for (std::int64_t c = 0; c < C; ++c) sum += vec::exp(xr[c * s] - row_max);
        // (x − max) − log Σ rather than x − (max + log Σ): x − max is exact near the max,
        // while max + log Σ would round to the spacing of floats at |max| (1e-3 at 1e4).
        const T log_sum = static_cast<T>(std::log(sum));
        for (std::int64_t c = 0; c < C; ++c) yr[c * s] = (xr[c * s] - row_max) - log_sum;
      } else {
#pragma omp simd reduction(+ : sum)
        for (std::int64_t c = 0; c < C; ++c) {
          const T e = vec::exp(xr[c * s] - row_max);
          yr[c * s] = e;
          sum += e;
        }
        const T inv_sum = static_cast<T>(1.0 / sum);
        for (std::int64_t c = 0; c < C; ++c) yr[c * s] *= inv_sum;
      }
    });
  });
}

// softmax: dx = y ⊙ (dout − Σ dout ⊙ y);  log_softmax: dx = dout − exp(y) · Σ dout.
template <typename T>
void softmax_backward(T* dx, const T* dout, const T* y, const DimGeometry& g, bool log_space) {
  with_layout(g, [&]<bool kContiguous>() {
    const std::int64_t s = kContiguous ? 1 : g.inner, C = g.size;
    for_each_row(g, [&](std::int64_t base) {
      const T* dr = dout + base;
      const T* yr = y + base;
      T* dxr = dx + base;
      double sum = 0;
      if (log_space) {
#pragma omp simd reduction(+ : sum)
        for (std::int64_t c = 0; c < C; ++c) sum += dr[c * s];
        const T total = static_cast<T>(sum);
        for (std::int64_t c = 0; c < C; ++c) dxr[c * s] = dr[c * s] - vec::exp(yr[c * s]) * total;
      } else {
#pragma omp simd reduction(+ : sum)
        for (std::int64_t c = 0; c < C; ++c) sum += dr[c * s] * yr[c * s];
        const T dot = static_cast<T>(sum);
        for (std::int64_t c = 0; c < C; ++c) dxr[c * s] = yr[c * s] * (dr[c * s] - dot);
      }
    });
  });
}

// ---- glue shared by softmax and log_softmax

Tensor softmax_op(const Tensor& x, std::int64_t dim_in, bool log_space) {
  const char* op = log_space ? "log_softmax" : "softmax";
  const std::int64_t dim = normalize_dim(dim_in, x.dim(), op);
  // A 0-d tensor is a single row of one element: its geometry is (1, 1, 1).
  const DimGeometry g = dim_geometry(x.shape(), dim);
  const Tensor xc = x.contiguous();
  Tensor y = Tensor::empty(x.shape(), x.dtype());
  dispatch_floating(x.dtype(), op, [&]<typename T>() {
    softmax_forward(y.data<T>(), xc.data<T>(), g, log_space);
  });
  if (!should_record({x})) return y;
  record(y, op, {x}, [y = y.detach(), g, dim, log_space, op](const Tensor& dout) -> TensorList {
    if (is_grad_enabled()) {  // recorded (create_graph): the same formulas with differentiable ops
      const Tensor out = saved_output(y);
      if (log_space) return {sub(dout, mul(exp(out), sum(dout, {dim}, true)))};
      return {mul(out, sub(dout, sum(mul(dout, out), {dim}, true)))};
    }
    const Tensor d = dout.contiguous();
    Tensor dx = Tensor::empty(y.shape(), y.dtype());
    dispatch_floating(y.dtype(), op, [&]<typename T>() {
      softmax_backward(dx.data<T>(), d.data<T>(), y.data<T>(), g, log_space);
    });
    return {dx};
  }, DoubleBackward::supported, Saves::output);
  // forward: softmax dy = y ⊙ (dx − Σ dx⊙y); log_softmax dy = dx − Σ softmax ⊙ dx
  if (forward_rules_wanted()) record_forward(y, [y = y.detach(), dim, log_space](const TensorList& t) {
    if (log_space) return sub(t[0], sum(mul(exp(y), t[0]), {dim}, true));
    return mul(y, sub(t[0], sum(mul(t[0], y), {dim}, true)));
  });
  return y;
}

}  // namespace

Tensor softmax(const Tensor& x, std::int64_t dim) { return softmax_op(x, dim, false); }

Tensor log_softmax(const Tensor& x, std::int64_t dim) { return softmax_op(x, dim, true); }

}  // namespace tapegrad
