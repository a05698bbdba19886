// layer_norm.cpp — layer_norm and rms_norm over the trailing dims, fused forward and backward
// kernels in the shape of llm.c's layernorm_forward / layernorm_backward.
//
// x is viewed as (rows, C), C = the product of normalized_shape. Per row:
//   layer_norm: xhat = (x − mean) · rstd,  rstd = 1/sqrt(mean((x − mean)²) + eps),  y = xhat ⊙ weight + bias
//   rms_norm:   xhat = x · rstd,           rstd = 1/sqrt(mean(x²) + eps),           y = xhat ⊙ weight
// Backward, with dxhat = dout ⊙ weight (weight = 1 without affine):
//   layer_norm: dx = rstd · (dxhat − mean(dxhat) − xhat · mean(dxhat ⊙ xhat))
//   rms_norm:   dx = rstd · (dxhat − xhat · mean(dxhat ⊙ xhat))   (no mean was subtracted)
//   dweight = Σ_rows dout ⊙ xhat,  dbias = Σ_rows dout
// rms_norm runs the same kernels with mean == nullptr (the mean is held at 0) and no bias.
// A recorded backward pass (create_graph) differentiates the same formulas composed of
// differentiable ops instead (norm_composite).
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <utility>
#include <vector>

#include "../cpu/parallel.hpp"
#include "../cpu/thread_scratch.hpp"
#include "../forward_ad.hpp"
#include "../grad_mode.hpp"
#include "../node.hpp"
#include "../ops.hpp"
#include "../recompute.hpp"
#include "../saved_tensor.hpp"
#include "data_or_null.hpp"

namespace tapegrad {

namespace {

// ---- kernels: x, out, dout, dx are contiguous (rows, C); weight, bias, dweight, dbias (C);
// mean, rstd (rows). weight and bias may be nullptr (no affine); mean == nullptr is rms_norm.

// y = (x − mean) · rstd ⊙ weight + bias for one row: the forward's last pass, and all of the
// recipe that makes the output again from the saved statistics (bitwise the same numbers).
template <typename T>
inline void normalize_row(T* yr, const T* xr, const T* weight, const T* bias, T row_mean, T row_rstd,
                          std::int64_t C) {
  for (std::int64_t c = 0; c < C; ++c) {
    const T xhat = (xr[c] - row_mean) * row_rstd;
    yr[c] = xhat * (weight ? weight[c] : T(1)) + (bias ? bias[c] : T(0));
  }
}

// The output again from the statistics the forward saved (mean == nullptr: rms_norm).
template <typename T>
void layer_norm_apply(T* out, const T* x, const T* weight, const T* bias, const T* mean, const T* rstd,
                      std::int64_t rows, std::int64_t C) {
  parallel_region_if(rows * C > kParallelGrain, [&] {
#pragma omp for nowait
    for (std::int64_t r = 0; r < rows; ++r)
      normalize_row(out + r * C, x + r * C, weight, bias, mean ? mean[r] : T(0), rstd[r], C);
  });
}

// The rows go through each step kNormRowGroup at a time: the means of a group, then its
// variances, then its outputs. Why: a row's mean and variance are sums in double that GCC's
// simd reduction adds in one chain of dependent additions (16 of them at C = 128, then the 8
// lanes one after another), and the variance waits for the mean, the output for both. Row by
// row, every step waited on the chain before it; over a group, the chains of its rows overlap
// (attention's softmax_rows does the same, attention_materialized.cpp). Each row computes
// exactly what it did alone, in the same order: the same bits.
//
// Only where x is small enough to be in cache, as it is coming from the op before: there the
// groups pay (one thread, µs a call, (512, 128) in a loop: forward 24-31 -> 17-19, backward
// 27-32 -> 22-27). With x from memory they lose: (2048, 384), M's size, after a 64 MB flush,
// forward 237-250 -> 286-326 µs, and asking for the next group's rows or the output's lines
// ahead did not win it back (bench/README.md). So larger inputs go row by row, as before.
// (Each kernel is compiled for groups of at most 1 row too, so that the row-by-row path is the
// loop it was: with a group size known only at run time it ran about 6% slower from memory.)
constexpr std::int64_t kNormRowGroup = 16;
constexpr std::int64_t kGroupedNormBytes = 512 * 1024;

template <typename T>
bool norm_rows_grouped(std::int64_t rows, std::int64_t C) {
  return rows * C * static_cast<std::int64_t>(sizeof(T)) <= kGroupedNormBytes;
}

template <std::int64_t Group, typename T>
void layer_norm_forward_rows(T* out, T* mean, T* rstd, const T* x, const T* weight, const T* bias,
                             std::int64_t rows, std::int64_t C, double eps) {
  parallel_region_if(rows * C > kParallelGrain, [&] {
#pragma omp for nowait
    for (std::int64_t r0 = 0; r0 < rows; r0 += Group) {
      const std::int64_t r1 = std::min(r0 + Group, rows);
      // Statistics in double; two passes (mean, then squared deviations) instead of
      // E[x²] − E[x]², which cancels catastrophically when |mean| ≫ std. The simd reductions
      // add in a fixed vector order: the same on every run and for every thread count.
      double m[Group] = {}, v[Group];
      if (mean)
        for (std::int64_t r = r0; r < r1; ++r) {
          const T* xr = x + r * C;
          double sum = 0;
#pragma omp simd reduction(+ : sum)
          for (std::int64_t c = 0; c < C; ++c) sum += xr[c];
          m[r - r0] = sum / static_cast<double>(C);
        }
      for (std::int64_t r = r0; r < r1; ++r) {
        const T* xr = x + r * C;
        const double row_m = m[r - r0];
        double sum = 0;
#pragma omp simd reduction(+ : sum)
        for (std::int64_t c = 0; c < C; ++c) sum += (xr[c] - row_m) * (xr[c] - row_m);
        v[r - r0] = sum / static_cast<double>(C);  // biased variance (or mean(x²) for rms_norm), as PyTorch
      }
      for (std::int64_t r = r0; r < r1; ++r) {
        const T row_mean = static_cast<T>(m[r - r0]), row_rstd = static_cast<T>(1.0 / std::sqrt(v[r - r0] + eps));
        normalize_row(out + r * C, x + r * C, weight, bias, row_mean, row_rstd, C);
        // Save two numbers per row, not xhat (C per row): the backward recomputes xhat from them
        // (save memory at the cost of compute).
        if (mean) mean[r] = row_mean;
        rstd[r] = row_rstd;
      }
    }
  });
}

template <typename T>
void layer_norm_forward(T* out, T* mean, T* rstd, const T* x, const T* weight, const T* bias,
                        std::int64_t rows, std::int64_t C, double eps) {
  if (norm_rows_grouped<T>(rows, C))
    layer_norm_forward_rows<kNormRowGroup>(out, mean, rstd, x, weight, bias, rows, C, eps);
  else
    layer_norm_forward_rows<1>(out, mean, rstd, x, weight, bias, rows, C, eps);
}

// Σ dxhat and Σ dxhat ⊙ xhat over one row, with AddParams its share of the parameters'
// gradients (dweight += dout ⊙ xhat, dbias += dout, in double per thread) in the same pass:
// one read of the row less than two loops, and every sum keeps its order, so the same bits.
// A template parameter, not a branch in the loop, which would keep it from vectorizing.
template <bool AddParams, typename T>
inline std::pair<double, double> row_sums(double* dweight_part, double* dbias_part, const T* dr, const T* xr,
                                          const T* weight, T row_mean, T row_rstd, std::int64_t C) {
  double sum_dxhat = 0, sum_dxhat_xhat = 0;
#pragma omp simd reduction(+ : sum_dxhat, sum_dxhat_xhat)
  for (std::int64_t c = 0; c < C; ++c) {
    const T xhat = (xr[c] - row_mean) * row_rstd;
    if constexpr (AddParams) {
      dweight_part[c] += static_cast<double>(dr[c]) * xhat;
      dbias_part[c] += dr[c];
    }
    const double dxhat = static_cast<double>(dr[c]) * (weight ? weight[c] : T(1));
    sum_dxhat += dxhat;
    sum_dxhat_xhat += dxhat * xhat;
  }
  return {sum_dxhat, sum_dxhat_xhat};
}

// Gradient outputs first; dx, dweight, dbias may be nullptr when not needed; with add_to_dx
// the gradient is added into dx instead of written over it. dweight and
// dbias are sums over rows: each thread sums its own rows into a private buffer, and the
// buffers are added in thread order afterwards (no race, and the same result on every run).
// The buffers start on cache lines of their own (ThreadScratch).
template <std::int64_t MaxGroup, typename T>
void layer_norm_backward_rows(T* dx, bool add_to_dx, T* dweight, T* dbias, const T* dout, const T* x,
                              const T* weight, const T* mean, const T* rstd, std::int64_t rows, std::int64_t C) {
  const bool parallel = rows * C > kParallelGrain && more_than_one_thread_available();
  const int threads = parallel ? omp_get_max_threads() : 1;
  const bool need_params = dweight || dbias;
  detail::ThreadScratch<double> partial(need_params ? 2 * C : 0);  // zeros: dweight's share, then dbias's
  detail::ThreadScratch<T> dx_row(add_to_dx ? C : 0);             // a row of dx, before it is added
  // The backward's groups hold 4 KiB of x (8 rows at C = 128 in float): groups of 16 rows ran
  // slower at C = 384 than row by row even in cache, and 8 KiB gained less.
  const std::int64_t group =
      MaxGroup == 1 ? 1
                    : std::clamp<std::int64_t>(4096 / std::max<std::int64_t>(C * sizeof(T), 1), 1, MaxGroup);
  parallel_region_if(parallel, [&] {
    double* dweight_part = need_params ? partial.mine() : nullptr;
    double* dbias_part = need_params ? dweight_part + C : nullptr;
    // This thread's rows: one contiguous share, the first rows % threads threads one row more,
    // as the static schedule gave them when this was an omp for over rows. The shares decide
    // which rows each partial sum of dweight and dbias holds, so they keep those sums' bits.
    const std::int64_t team = omp_get_num_threads(), me = omp_get_thread_num();
    const std::int64_t share = rows / team, extra = rows % team;
    const std::int64_t begin = me * share + std::min(me, extra), end = begin + share + (me < extra);
    // A group of rows at a time, as the forward: the sums of its rows (chains of dependent
    // additions) overlap, and the rows' dx follow. dweight and dbias still take the rows in order.
    for (std::int64_t r0 = begin; r0 < end; r0 += group) {
      const std::int64_t r1 = std::min(r0 + group, end);
      // mean(dxhat) and mean(dxhat ⊙ xhat) over each row, and the row's share of dweight and
      // dbias in the same pass over it
      std::pair<double, double> sums[MaxGroup];
      for (std::int64_t r = r0; r < r1; ++r) {
        const T* xr = x + r * C;
        const T* dr = dout + r * C;
        const T row_mean = mean ? mean[r] : T(0), row_rstd = rstd[r];
        sums[r - r0] = need_params ? row_sums<true>(dweight_part, dbias_part, dr, xr, weight, row_mean, row_rstd, C)
                                   : row_sums<false>(dweight_part, dbias_part, dr, xr, weight, row_mean, row_rstd, C);
      }
      if (!dx) continue;  // the sums were not needed: only the parameters' share
      for (std::int64_t r = r0; r < r1; ++r) {
        const T* xr = x + r * C;
        const T* dr = dout + r * C;
        const T row_mean = mean ? mean[r] : T(0), row_rstd = rstd[r];
        const auto [sum_dxhat, sum_dxhat_xhat] = sums[r - r0];
        const T mean_dxhat = mean ? static_cast<T>(sum_dxhat / static_cast<double>(C)) : T(0);
        const T mean_dxhat_xhat = static_cast<T>(sum_dxhat_xhat / static_cast<double>(C));
        T* dxr = dx + r * C;
        const auto dx_at = [&](std::int64_t c) {
          const T xhat = (xr[c] - row_mean) * row_rstd;
          const T dxhat = dr[c] * (weight ? weight[c] : T(1));
          return row_rstd * (dxhat - mean_dxhat - xhat * mean_dxhat_xhat);
        };
        if (add_to_dx) {  // dx holds the gradient that arrived before (grad_to_add_into)
          // Two loops: in one, GCC fuses the last product into the add (an FMA, C++ allows it),
          // and the sum would no longer be the engine's own add, bit for bit.
          T* row = dx_row.mine();
          for (std::int64_t c = 0; c < C; ++c) row[c] = dx_at(c);
          for (std::int64_t c = 0; c < C; ++c) dxr[c] += row[c];
        } else {
          for (std::int64_t c = 0; c < C; ++c) dxr[c] = dx_at(c);
        }
      }
    }
  });
  if (!need_params) return;
  for (std::int64_t c = 0; c < C; ++c) {
    double dw = 0, db = 0;
    for (int k = 0; k < threads; ++k) {
      dw += partial.of(k)[c];
      db += partial.of(k)[C + c];
    }
    if (dweight) dweight[c] = static_cast<T>(dw);
    if (dbias) dbias[c] = static_cast<T>(db);
  }
}

template <typename T>
void layer_norm_backward(T* dx, bool add_to_dx, T* dweight, T* dbias, const T* dout, const T* x, const T* weight,
                         const T* mean, const T* rstd, std::int64_t rows, std::int64_t C) {
  if (norm_rows_grouped<T>(rows, C))
    layer_norm_backward_rows<kNormRowGroup>(dx, add_to_dx, dweight, dbias, dout, x, weight, mean, rstd, rows, C);
  else
    layer_norm_backward_rows<1>(dx, add_to_dx, dweight, dbias, dout, x, weight, mean, rstd, rows, C);
}

// ---- glue shared by layer_norm and rms_norm

// Checks the arguments and returns C, the number of elements normalized together.
std::int64_t check_norm_args(const char* op, const Tensor& x, const Shape& normalized_shape,
                             const Tensor& weight, const Tensor& bias, double eps) {
  const std::int64_t k = static_cast<std::int64_t>(normalized_shape.size());
  if (k == 0)
    throw ShapeError(std::string(op) + ": normalized_shape must have at least one dim");
  if (x.dim() < k || !std::equal(normalized_shape.begin(), normalized_shape.end(), x.shape().end() - k))
    throw ShapeError(std::string(op) + ": normalized_shape " + shape_str(normalized_shape) +
                     " does not match the trailing dims of the input of shape " + shape_str(x.shape()));
  for (const auto& [name, param] : {std::pair{"weight", &weight}, std::pair{"bias", &bias}}) {
    if (!param->defined()) continue;
    if (param->shape() != normalized_shape)
      throw ShapeError(std::string(op) + ": " + name + " of shape " + shape_str(param->shape()) +
                       " does not match normalized_shape " + shape_str(normalized_shape));
    if (param->dtype() != x.dtype())
      throw DTypeError(std::string(op) + ": " + name + " is " + dtype_name(param->dtype()) +
                       " but the input is " + dtype_name(x.dtype()));
  }
  if (!(eps >= 0)) throw ValueError(std::string(op) + ": eps must be >= 0, got " + std::to_string(eps));
  return shape_numel(normalized_shape);
}

// The same normalization composed of differentiable ops (mean, rsqrt, ...): what a recorded
// backward pass differentiates (recompute.hpp), since the fused backward above is a raw loop.
Tensor norm_composite(bool rms, const Tensor& x, const Shape& normalized_shape, const Tensor& weight,
                      const Tensor& bias, double eps) {
  std::vector<std::int64_t> dims;
  for (std::int64_t d = x.dim() - static_cast<std::int64_t>(normalized_shape.size()); d < x.dim(); ++d) dims.push_back(d);
  const Tensor centered = rms ? x : sub(x, tapegrad::mean(x, dims, true));
  const Tensor rstd = tapegrad::rsqrt(add(tapegrad::mean(mul(centered, centered), dims, true), eps));
  Tensor y = mul(centered, rstd);
  if (weight.defined()) y = mul(y, weight);
  if (bias.defined()) y = add(y, bias);
  return y;
}

// rms (no centering, no bias) when `rms` is true.
Tensor norm_op(const char* op, bool rms, const Tensor& x, const Shape& normalized_shape,
               const Tensor& weight, const Tensor& bias, double eps) {
  const std::int64_t C = check_norm_args(op, x, normalized_shape, weight, bias, eps);
  const std::int64_t rows = C ? x.numel() / C : 0;
  const Tensor xc = x.contiguous();
  const Tensor wc = weight.defined() ? weight.contiguous() : Tensor();
  const Tensor bc = bias.defined() ? bias.contiguous() : Tensor();
  Tensor out = Tensor::empty(x.shape(), x.dtype());
  Tensor mean = rms ? Tensor() : Tensor::empty({rows}, x.dtype());
  Tensor rstd = Tensor::empty({rows}, x.dtype());
  dispatch_floating(x.dtype(), op, [&]<typename T>() {
    layer_norm_forward(out.data<T>(), rms ? nullptr : mean.data<T>(), rstd.data<T>(), xc.data<T>(),
                       data_or_null<T>(wc), data_or_null<T>(bc), rows, C, eps);
  });
  if (!should_record({x, weight, bias})) return out;
  const bool need_x = x.requires_grad();
  const bool need_weight = weight.defined() && weight.requires_grad();
  const bool need_bias = bias.defined() && bias.requires_grad();
  record(out, op, {x, weight, bias},
         [op, rms, x, weight, bias, eps, mean, rstd, rows, C, normalized_shape, need_x, need_weight,
          need_bias](const Tensor& dout) -> TensorList {
           if (is_grad_enabled())  // recorded (create_graph): backpropagate through the composite
             return detail::backward_by_recomputing(
                 [&](const TensorList& in) { return norm_composite(rms, in[0], normalized_shape, in[1], in[2], eps); },
                 {x, weight, bias}, dout);
           const Tensor xc = x.contiguous();
           const Tensor wc = weight.defined() ? weight.contiguous() : Tensor();
           const Tensor d = dout.contiguous();
           // x's gradient added into the one that arrived before it, where the engine offers
           // that (the residual stream's, in a pre-LN block: grad_to_add_into, node.hpp)
           const Tensor arrived = need_x ? grad_to_add_into(0) : Tensor();
           const bool add_to_dx = arrived.defined() && arrived.shape() == xc.shape() && arrived.dtype() == xc.dtype();
           Tensor dx = add_to_dx ? arrived : need_x ? Tensor::empty(xc.shape(), xc.dtype()) : Tensor();
           Tensor dweight = need_weight ? Tensor::empty(normalized_shape, xc.dtype()) : Tensor();
           Tensor dbias = need_bias ? Tensor::empty(normalized_shape, xc.dtype()) : Tensor();
           dispatch_floating(xc.dtype(), op, [&]<typename T>() {
             T* no_grad = nullptr;
             layer_norm_backward(need_x ? dx.data<T>() : no_grad, add_to_dx,
                                 need_weight ? dweight.data<T>() : no_grad,
                                 need_bias ? dbias.data<T>() : no_grad, d.data<T>(), xc.data<T>(),
                                 data_or_null<T>(wc), data_or_null<T>(mean), rstd.data<T>(), rows, C);
           });
           return {add_to_dx ? Tensor() : dx, dweight, dbias};  // undefined: added in already
         }, DoubleBackward::supported, Saves::inputs);
  // forward: the jvp of the composite (x̂·γ + β written with differentiable ops)
  if (forward_rules_wanted()) record_forward(out, [rms, x, weight, bias, eps, normalized_shape](const TensorList& t) {
    return detail::jvp_of([&](const TensorList& in) { return norm_composite(rms, in[0], normalized_shape, in[1], in[2], eps); },
                          {x, weight, bias}, t);
  });
  // The op that keeps `out` for its backward (the next linear) may keep this recipe instead:
  // `out` again from x and the statistics, which this node keeps anyway (saved_tensor.hpp).
  attach_recipe(out, [op, rms, x, weight, bias, mean, rstd, rows, C] {
    const Tensor xc = x.contiguous();
    const Tensor wc = weight.defined() ? weight.contiguous() : Tensor();
    const Tensor bc = bias.defined() ? bias.contiguous() : Tensor();
    Tensor again = Tensor::empty(xc.shape(), xc.dtype());
    dispatch_floating(xc.dtype(), op, [&]<typename T>() {
      layer_norm_apply(again.data<T>(), xc.data<T>(), data_or_null<T>(wc), data_or_null<T>(bc),
                       rms ? nullptr : mean.data<T>(), rstd.data<T>(), rows, C);
    });
    return again;
  });
  return out;
}

}  // namespace

Tensor layer_norm(const Tensor& x, const Shape& normalized_shape, const Tensor& weight,
                  const Tensor& bias, double eps) {
  return norm_op("layer_norm", false, x, normalized_shape, weight, bias, eps);
}

Tensor rms_norm(const Tensor& x, const Shape& normalized_shape, const Tensor& weight, double eps) {
  return norm_op("rms_norm", true, x, normalized_shape, weight, Tensor(), eps);
}

}  // namespace tapegrad
