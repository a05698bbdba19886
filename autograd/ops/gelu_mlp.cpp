// gelu_mlp.cpp — the transformer's feed-forward as one op: y = gelu(x·W1ᵀ + b1)·W2ᵀ + b2.
//
// Why fuse: composed of linear, gelu, linear, the tape keeps two (rows, hidden) tensors per
// block for the backward — fc1's output u (gelu's input) and gelu's output h (fc2's input).
// hidden is 4·d_model, so together that is 8 of the ~16 floats per token that a pre-LN block
// keeps. This op keeps u only, and recomputes h in the backward from the same elementwise
// pass that computes gelu'(u) (the tanh form shares one tanh between them). The backward
// then costs no more elementwise passes than the composed ops' (one pass there for gelu'),
// and the block's saved activations shrink by a quarter. (PyTorch keeps both; Megatron-LM
// and the "selective recomputation" of Korthikanti et al. 2022 recompute cheap elementwise
// outputs for the same reason.)
//
//   forward:   u = x·W1ᵀ + b1          (N, hidden)  kept
//              h = gelu(u)             (N, hidden)  freed after the next line
//              y = h·W2ᵀ + b2          (N, out)
//   backward:  dh = dy·W2              h = gelu(u), du = dh ⊙ gelu'(u) and db1 in one pass
//                                      (h over u, unless the graph is retained)
//              dW2 = dyᵀ·h,  db2 = Σ_rows dy
//              dW1 = duᵀ·x,  dx = du·W1,  db1 = Σ_rows du (made by the pass above)
// The products, forward and backward, are linear()'s own kernels (linear_kernels.hpp), and
// every elementwise formula is gelu()'s (gelu.hpp), in the same order, so the results are
// bitwise those of the composed ops (tested). A recorded backward pass (create_graph)
// backpropagates through the composed ops instead (recompute.hpp).
#include <algorithm>
#include <tuple>

#include "../cpu/blas.hpp"
#include "../cpu/linear_kernels.hpp"
#include "../cpu/parallel.hpp"
#include "../cpu/streaming.hpp"
#include "../forward_ad.hpp"
#include "../grad_mode.hpp"
#include "../node.hpp"
#include "../ops.hpp"
#include "../recompute.hpp"
#include "../saved_tensor.hpp"
#include "data_or_null.hpp"
#include "gelu.hpp"

namespace tapegrad {

namespace {

// x (N, in), u and h (N, hidden), y (N, out), all row-major; W1 (hidden, in), W2 (out, hidden).
struct MlpSizes {
  std::int64_t in, hidden, out;
};

void check_gelu_mlp_args(const Tensor& x, const Tensor& w1, const Tensor& b1, const Tensor& w2, const Tensor& b2,
                         const std::string& approximate) {
  if (approximate != "none" && approximate != "tanh")
    throw ValueError("gelu_mlp: approximate must be \"none\" or \"tanh\", got \"" + approximate + "\"");
  if (w1.dim() != 2 || w2.dim() != 2)
    throw ShapeError("gelu_mlp: weights must be 2-d (out_features, in_features), got w1 " + shape_str(w1.shape()) +
                     " and w2 " + shape_str(w2.shape()));
  if (x.dim() < 1 || x.size(-1) != w1.size(1))
    throw ShapeError("gelu_mlp: input of shape " + shape_str(x.shape()) + " does not match w1 of shape " +
                     shape_str(w1.shape()) + " (expected last dim " + std::to_string(w1.size(1)) + ")");
  if (w2.size(1) != w1.size(0))
    throw ShapeError("gelu_mlp: w2 of shape " + shape_str(w2.shape()) + " does not take w1's " +
                     std::to_string(w1.size(0)) + " outputs (w1 " + shape_str(w1.shape()) + ")");
  for (const auto& [name, b, w] : {std::tuple{"b1", &b1, &w1}, std::tuple{"b2", &b2, &w2}})
    if (b->defined() && (b->dim() != 1 || b->size(0) != w->size(0)))
      throw ShapeError(std::string("gelu_mlp: ") + name + " of shape " + shape_str(b->shape()) + " does not match [" +
                       std::to_string(w->size(0)) + "]");
  for (const Tensor* t : {&w1, &b1, &w2, &b2})
    if (t->defined() && t->dtype() != x.dtype())
      throw DTypeError(std::string("gelu_mlp: dtypes differ (input ") + dtype_name(x.dtype()) + ", a weight or bias " +
                       dtype_name(t->dtype()) + ")");
}

// h = gelu(u) over n elements. (u comes straight from the gemm, still in the cache: no prefetch,
// which measured no faster here.)
template <typename T>
void gelu_pass(T* h, const T* u, std::int64_t n, bool tanh_form) {
  if (tanh_form) {
    parallel_region_if(n > kParallelGrain, [&] {
#pragma omp for simd nowait
      for (std::int64_t i = 0; i < n; ++i) h[i] = gelu_math::tanh_form(u[i]);
    });
  } else {
    parallel_region_if(n > kParallelGrain, [&] {
#pragma omp for simd nowait
      for (std::int64_t i = 0; i < n; ++i) h[i] = gelu_math::exact(u[i]);
    });
  }
}

// The backward's elementwise formulas over [begin, end): h = gelu(u) when WriteH, and
// dh ⊙= gelu'(u) in place (making it du) when WriteDu; with SumDu, also col_sum[i − row_start]
// += du[i], the bias gradient's running column sums (row_start: the index of the row's first
// element). The tanh form computes tanh u once for both. No branch inside the loops: a loop
// body with a conditional store is not vectorized, and the vectorized exp behind tanh is what
// makes this pass cheap. h may be u itself (h written over u): each element reads u before it
// writes h.
template <bool WriteH, bool WriteDu, bool SumDu, typename T>
inline void gelu_backward_elements(T* h, T* __restrict dh, const T* u, T* __restrict col_sum, std::int64_t row_start,
                                   std::int64_t begin, std::int64_t end, bool tanh_form) {
  if (tanh_form) {
#pragma omp simd
    for (std::int64_t i = begin; i < end; ++i) {
      const T x = u[i], t = gelu_math::tanh_of(x);
      if constexpr (WriteH) h[i] = gelu_math::tanh_form_given(x, t);
      if constexpr (WriteDu) {
        const T du = dh[i] * gelu_math::tanh_form_slope_given(x, t);
        dh[i] = du;
        if constexpr (SumDu) col_sum[i - row_start] += du;
      }
    }
  } else {
#pragma omp simd
    for (std::int64_t i = begin; i < end; ++i) {
      const T x = u[i];
      if constexpr (WriteH) h[i] = gelu_math::exact(x);
      if constexpr (WriteDu) {
        const T du = dh[i] * gelu_math::exact_slope(x);
        dh[i] = du;
        if constexpr (SumDu) col_sum[i - row_start] += du;
      }
    }
  }
}

// The backward's elementwise pass over n elements, on all threads (b1's gradient, if needed, is
// summed after it). In blocks that prefetch (streaming.hpp): u was written by the forward and
// comes from main memory, and the pass ran 2.5x faster so in M's step.
template <bool WriteH, bool WriteDu, typename T>
void gelu_backward_pass(T* h, T* __restrict dh, const T* u, std::int64_t n, bool tanh_form) {
  for_each_block(n, [&](std::int64_t begin, std::int64_t end) {
    gelu_backward_elements<WriteH, WriteDu, false>(h, dh, u, static_cast<T*>(nullptr), 0, begin, end, tanh_form);
  }, u, WriteH ? h : u, WriteDu ? dh : u);
}

// The same pass, on this thread, that also makes b1's gradient db1 = Σ_rows du while du is in
// registers: a separate sum reads the whole (rows, cols) du again, from memory in M (16 MB a
// layer). The sum's bits are sum(du, {0})'s: every column adds its rows in order, from 0, in
// T. So the blocks (streaming.hpp's, prefetching as the pass above) go in order on this thread,
// each cut where a row ends.
template <bool WriteH, typename T>
void gelu_backward_pass_summing(T* h, T* __restrict dh, const T* u, T* __restrict db, std::int64_t rows,
                                std::int64_t cols, bool tanh_form) {
  std::fill(db, db + cols, T(0));
  blocks_of(0, rows * cols, [&](std::int64_t begin, std::int64_t end) {
    for (std::int64_t b = begin; b < end;) {
      const std::int64_t row_start = b / cols * cols, e = std::min(end, row_start + cols);
      gelu_backward_elements<WriteH, true, true>(h, dh, u, db, row_start, b, e, tanh_form);
      b = e;
    }
  }, u, WriteH ? h : u, dh);
}

}  // namespace

Tensor gelu_mlp(const Tensor& x, const Tensor& w1, const Tensor& b1, const Tensor& w2, const Tensor& b2,
                const std::string& approximate) {
  check_gelu_mlp_args(x, w1, b1, w2, b2, approximate);
  check_blas_core_once();
  const bool tanh_form = approximate == "tanh";
  const Tensor xc = x.contiguous(), w1c = w1.contiguous(), w2c = w2.contiguous();
  const Tensor b1c = b1.defined() ? b1.contiguous() : Tensor(), b2c = b2.defined() ? b2.contiguous() : Tensor();
  const std::int64_t N = shape_numel(Shape(x.shape().begin(), x.shape().end() - 1));  // rows: all dims but the last
  const MlpSizes s{w1.size(1), w1.size(0), w2.size(0)};
  Shape out_shape = x.shape();
  out_shape.back() = s.out;
  Tensor u = Tensor::empty({N, s.hidden}, x.dtype());
  Tensor y = Tensor::empty(out_shape, x.dtype());
  dispatch_floating(x.dtype(), "gelu_mlp", [&]<typename T>() {
    linear_forward(u.data<T>(), xc.data<T>(), w1c.data<T>(), data_or_null<T>(b1c), N, s.in, s.hidden);
    Tensor h = Tensor::empty({N, s.hidden}, x.dtype());
    gelu_pass(h.data<T>(), u.data<T>(), N * s.hidden, tanh_form);
    linear_forward(y.data<T>(), h.data<T>(), w2c.data<T>(), data_or_null<T>(b2c), N, s.hidden, s.out);
  });
  if (!should_record({x, w1, b1, w2, b2})) return y;
  const bool need_x = x.requires_grad(), need_w1 = w1.requires_grad(), need_w2 = w2.requires_grad();
  const bool need_b1 = b1.defined() && b1.requires_grad(), need_b2 = b2.defined() && b2.requires_grad();
  record(y, "gelu_mlp", {x, w1, b1, w2, b2},
         // x: kept, or made again when it is a norm's output (saved_tensor.hpp)
         [saved_x = SavedTensor(x), w1, b1, w2, b2, u, approximate, tanh_form, N, s, need_x, need_w1, need_b1,
          need_w2, need_b2](const Tensor& dout) -> TensorList {
           const Tensor x = saved_x.get();
           if (is_grad_enabled())  // recorded (create_graph): backpropagate through the composed ops
             return detail::backward_by_recomputing(
                 [&](const TensorList& in) {
                   return linear(gelu(linear(in[0], in[1], in[2]), approximate), in[3], in[4]);
                 },
                 {x, w1, b1, w2, b2}, dout);
           const Tensor dy = dout.contiguous();
           const bool need_du = need_x || need_w1 || need_b1;
           const bool sum_in_pass = need_b1 && (get_num_threads() == 1 || N * s.hidden <= kParallelGrain);
           Tensor dx, dw1, db1, dw2, db2;
           // dh, then du in place; zero-filled only when the gemm below is skipped
           Tensor du = need_du ? Tensor::empty({N, s.hidden}, dy.dtype(), s.out == 0 || N == 0) : Tensor();
           // h over u when u is freed right after this (not a retained graph): one (N, hidden)
           // buffer less at the backward's peak. u is this op's own, shared with no one.
           Tensor h = !need_w2                      ? Tensor()
                      : saved_tensors_freed_after() ? u
                                                    : Tensor::empty({N, s.hidden}, dy.dtype());
           dispatch_floating(dy.dtype(), "gelu_mlp backward", [&]<typename T>() {
             if (need_du) {  // dh (N, hidden) = dy (N, out) · W2 (out, hidden)
               const Tensor w2c = w2.contiguous();
               linear_grad_input(du.data<T>(), dy.data<T>(), w2c.data<T>(), N, s.hidden, s.out);
             }
             const std::int64_t n = N * s.hidden;
             // On one thread the pass sums db1 too. On two, the order that sum(du, {0}) keeps (each
             // column down its rows) would split every row between the threads, and a pass that
             // summed so ran slower than the pass and the sum after it: at M's size 2.3-2.5 ms
             // against 2.0-2.1, at S's 0.17-0.20 against 0.13-0.14 (bench/README.md).
             if (sum_in_pass) {  // need_du too
               db1 = Tensor::empty({s.hidden}, dy.dtype());
               if (need_w2)
                 gelu_backward_pass_summing<true>(h.data<T>(), du.data<T>(), u.data<T>(), db1.data<T>(), N, s.hidden,
                                                  tanh_form);
               else
                 gelu_backward_pass_summing<false>(static_cast<T*>(nullptr), du.data<T>(), u.data<T>(), db1.data<T>(),
                                                   N, s.hidden, tanh_form);
             } else if (need_w2 && need_du) gelu_backward_pass<true, true>(h.data<T>(), du.data<T>(), u.data<T>(), n, tanh_form);
             else if (need_w2) gelu_backward_pass<true, false>(h.data<T>(), static_cast<T*>(nullptr), u.data<T>(), n, tanh_form);
             else if (need_du) gelu_backward_pass<false, true>(static_cast<T*>(nullptr), du.data<T>(), u.data<T>(), n, tanh_form);
             if (need_w2) {  // dW2 (out, hidden) = dyᵀ (out, N) · h (N, hidden)
               dw2 = Tensor::empty({s.out, s.hidden}, dy.dtype(), N == 0);
               linear_grad_weight(dw2.data<T>(), dy.data<T>(), h.data<T>(), N, s.hidden, s.out);
             }
             if (need_x) {  // dx (N, in) = du (N, hidden) · W1 (hidden, in)
               const Tensor w1c = w1.contiguous();
               dx = Tensor::empty(x.shape(), dy.dtype(), N == 0 || s.hidden == 0);
               linear_grad_input(dx.data<T>(), du.data<T>(), w1c.data<T>(), N, s.in, s.hidden);
             }
             if (need_w1) {  // dW1 (hidden, in) = duᵀ (hidden, N) · x (N, in)
               const Tensor xc = x.contiguous();
               dw1 = Tensor::empty({s.hidden, s.in}, dy.dtype(), N == 0);
               linear_grad_weight(dw1.data<T>(), du.data<T>(), xc.data<T>(), N, s.in, s.hidden);
             }
           });
           if (need_b2) db2 = sum(dy.reshape({N, s.out}), {0});
           if (need_b1 && !sum_in_pass) db1 = sum(du, {0});
           return {dx, dw1, db1, dw2, db2};
         }, DoubleBackward::supported, Saves::inputs);
  // forward: the jvp of the composite, linear(gelu(linear(x, w1, b1)), w2, b2)
  if (forward_rules_wanted()) record_forward(y, [x, w1, b1, w2, b2, approximate](const TensorList& t) {
    return detail::jvp_of(
        [&](const TensorList& in) { return linear(gelu(linear(in[0], in[1], in[2]), approximate), in[3], in[4]); },
        {x, w1, b1, w2, b2}, t);
  });
  return y;
}

}  // namespace tapegrad
