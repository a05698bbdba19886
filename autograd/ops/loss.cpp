// loss.cpp — cross_entropy (fused log-softmax + negative log-likelihood) and mse_loss.
//
// cross_entropy, per row r of logits x with target t, logsumexp lse = log Σ_c exp(x_c):
//   loss_r = (1−ε)·(lse − x_t) + (ε/C)·Σ_c (lse − x_c)       (0 when t == ignore_index)
//   dx_c   = (softmax_c − q_c) · dout_r,  q_c = (1−ε)·[c == t] + ε/C
// with `mean` dividing by the number of targets that are not ignored, as PyTorch does.
// mse_loss is composed from sub, mul and mean/sum: it has no backward of its own.
// Under create_graph the cross_entropy backward is the same formula in differentiable ops.
#include <cmath>
#include <vector>

#include "../cpu/parallel.hpp"
#include "../cpu/streaming.hpp"
#include "../cpu/vec_math.hpp"
#include "../grad_mode.hpp"
#include "../node.hpp"
#include "../ops.hpp"
#include "rows.hpp"

namespace tapegrad {

namespace {

// logits viewed as (outer, C, inner) around the class dim (dim_geometry): row r = o·inner + i holds x[o, :, i], `inner` apart.
// (N, C) has inner 1; (N, C, d1, ...) has inner d1·...; a lone (C) row has outer 1.
// ---- kernels: logits and dlogits are contiguous (outer, C, inner), targets contiguous (rows)

// Writes each row's loss (in double, summed later in a fixed order so the result does not
// depend on the thread count) and its logsumexp, the one statistic the backward needs. Both
// stay in double: a float32 lse of logits near 1e4 would be off by 5e-4, and so would every
// probability recomputed from it.
template <typename T>
void cross_entropy_forward(double* losses, double* lse, const T* logits, const std::int64_t* targets,
                           const DimGeometry& g, std::int64_t ignore_index, double label_smoothing) {
  with_layout(g, [&]<bool kContiguous>() {
  const std::int64_t C = g.size, s = kContiguous ? 1 : g.inner;
  parallel_region_if(row_count(g) * C > kParallelGrain, [&] {
#pragma omp for nowait
    for (std::int64_t r = 0; r < row_count(g); ++r) {
      const std::int64_t t = targets[r];
      if (t == ignore_index) {
        losses[r] = 0;
        lse[r] = 0;
        continue;
      }
      const T* x = logits + (r / s) * C * s + r % s;
      T row_max = -INFINITY;
#pragma omp simd reduction(max : row_max)
      for (std::int64_t c = 0; c < C; ++c) row_max = x[c * s] > row_max ? x[c * s] : row_max;
      // In double: 50257 float32 terms lose digits otherwise. The simd reduction adds in a fixed
      // vector order (the same on every run and for every thread count); vec::exp vectorizes.
      double sum_exp = 0, sum_x = 0;
      if (label_smoothing == 0) {
        // No smoothing term at all, not 0 · it: a class masked with a -inf logit makes Σx -inf,
        // and 0 · inf would be a NaN loss (PyTorch's is finite). Also one sum less per logit.
#pragma omp simd reduction(+ : sum_exp)
        for (std::int64_t c = 0; c < C; ++c) sum_exp += vec::exp(x[c * s] - row_max);
      } else {
#pragma omp simd reduction(+ : sum_exp, sum_x)
        for (std::int64_t c = 0; c < C; ++c) {
          sum_exp += vec::exp(x[c * s] - row_max);
          sum_x += x[c * s];
        }
      }
      const double row_lse = row_max + std::log(sum_exp);
      const double nll = row_lse - x[t * s];
      if (label_smoothing == 0) {
        losses[r] = nll;
      } else {
        const double smooth = row_lse - sum_x / static_cast<double>(C);  // mean_c(−log p_c)
        losses[r] = (1 - label_smoothing) * nll + label_smoothing * smooth;
      }
      lse[r] = row_lse;
    }
  });
  });
}

// dlogits_c = scale_r · (exp(x_c − lse) − q_c), where scale_r = dout[r · dout_stride] · scale
// (dout_stride 0 for a reduced loss, scale 1/count for mean). Ignored rows get zeros.
// dlogits may be logits (the gradient written over them).
template <typename T>
void cross_entropy_backward(T* dlogits, const T* dout, std::int64_t dout_stride, double scale,
                            const T* logits, const std::int64_t* targets, const double* lse,
                            const DimGeometry& g, std::int64_t ignore_index, double label_smoothing) {
  with_layout(g, [&]<bool kContiguous>() {
  const std::int64_t C = g.size, s = kContiguous ? 1 : g.inner;
  const T off_target = static_cast<T>(label_smoothing / static_cast<double>(C));  // q_c for c ≠ t
  const T on_target = static_cast<T>(1 - label_smoothing) + off_target;         // q_t
  parallel_region_if(row_count(g) * C > kParallelGrain, [&] {
#pragma omp for nowait
    for (std::int64_t r = 0; r < row_count(g); ++r) {
      const std::int64_t base = (r / s) * C * s + r % s, t = targets[r];
      const T* x = logits + base;
      T* dx = dlogits + base;
      if (t == ignore_index) {
        for (std::int64_t c = 0; c < C; ++c) dx[c * s] = 0;
        continue;
      }
      const T row_scale = static_cast<T>(dout[r * dout_stride] * scale);
      // x − lse in double (exact for |lse| up to 1e4 and more), then exp in T, vectorized (simd:
      // dlogits may be logits itself, each element read before it is written).
      const auto classes = [&](std::int64_t c0, std::int64_t c1) {
#pragma omp simd
        for (std::int64_t c = c0; c < c1; ++c)
          dx[c * s] = row_scale * (vec::exp(static_cast<T>(x[c * s] - lse[r])) - off_target);
      };
      // The logits were written by the forward and come from main memory: a row in blocks that
      // prefetch (streaming.hpp) took G's backward from 11-13 to 6 ms.
      if constexpr (kContiguous) blocks_of(0, C, classes, x);
      else classes(0, C);
      dx[t * s] += row_scale * (off_target - on_target);
    }
  });
  });
}

// Throws unless every target is ignore_index or in [0, C); returns how many are not ignored.
std::int64_t count_targets(const Tensor& targets, std::int64_t C, std::int64_t ignore_index) {
  const std::int64_t* t = targets.data<std::int64_t>();
  std::int64_t count = 0;
  for (std::int64_t r = 0; r < targets.numel(); ++r) {
    if (t[r] == ignore_index) continue;
    if (t[r] < 0 || t[r] >= C)
      throw ValueError("cross_entropy: target " + std::to_string(t[r]) + " (element " +
                       std::to_string(r) + " of targets) is out of range for C = " +
                       std::to_string(C) + " classes (expected 0 <= target < " +
                       std::to_string(C) + ", or ignore_index " + std::to_string(ignore_index) + ")");
    ++count;
  }
  return count;
}

// The backward with differentiable ops, for a recorded backward pass (create_graph):
//   dx = (softmax(x) · valid − q) · dout · scale
// with the constants valid (1 for a row whose target is not ignored, size 1 along the class
// dim) and q (the target distribution of each valid row, 0 in ignored rows).
Tensor cross_entropy_grad_recorded(const Tensor& logits, const Tensor& targets, const Tensor& dout,
                                   const DimGeometry& g, double scale, Reduction reduction,
                                   std::int64_t ignore_index, double label_smoothing) {
  const std::int64_t class_dim = logits.dim() == 1 ? 0 : 1;
  Shape row_shape = logits.shape();
  row_shape[class_dim] = 1;
  Tensor valid = zeros(row_shape, logits.dtype()), q = zeros(logits.shape(), logits.dtype());
  const std::int64_t C = g.size, inner = g.inner;
  dispatch_floating(logits.dtype(), "cross_entropy", [&]<typename T>() {
    const std::int64_t* t = targets.data<std::int64_t>();
    T* pv = valid.data<T>();
    T* pq = q.data<T>();
    for (std::int64_t r = 0; r < row_count(g); ++r) {
      if (t[r] == ignore_index) continue;
      pv[r] = T(1);
      T* row = pq + (r / inner) * C * inner + r % inner;
      for (std::int64_t c = 0; c < C; ++c) row[c * inner] = static_cast<T>(label_smoothing / static_cast<double>(C));
      row[t[r] * inner] += static_cast<T>(1 - label_smoothing);
    }
  });
  const Tensor weight = reduction == Reduction::none ? unsqueeze(dout, class_dim) : dout;
  return mul(sub(mul(softmax(logits, class_dim), valid), q), mul(weight, scale));
}

}  // namespace

Tensor cross_entropy(const Tensor& logits, const Tensor& targets, Reduction reduction,
                     std::int64_t ignore_index, double label_smoothing) {
  // logits: (N, C, d1, ...) or (C); targets: (N, d1, ...) or () — the class dim 1 removed.
  if (logits.dim() == 0)
    throw ShapeError("cross_entropy: logits must have a class dim, got shape " + shape_str(logits.shape()));
  Shape expected_targets = logits.shape();
  expected_targets.erase(expected_targets.begin() + (logits.dim() == 1 ? 0 : 1));
  if (targets.shape() != expected_targets)
    throw ShapeError("cross_entropy: targets of shape " + shape_str(targets.shape()) +
                     " do not match logits of shape " + shape_str(logits.shape()) +
                     " (expected targets of shape " + shape_str(expected_targets) + ")");
  if (targets.dtype() != DType::int64)
    throw DTypeError(std::string("cross_entropy: targets must be int64 class indices, got ") +
                     dtype_name(targets.dtype()));
  if (!(label_smoothing >= 0 && label_smoothing <= 1))
    throw ValueError("cross_entropy: label_smoothing must be in [0, 1], got " + std::to_string(label_smoothing));

  const DimGeometry g = dim_geometry(logits.shape(), logits.dim() == 1 ? 0 : 1);  // around the class dim
  const Tensor x = logits.contiguous(), t = targets.contiguous();
  const std::int64_t count = count_targets(t, g.size, ignore_index);

  std::vector<double> losses(row_count(g));
  Tensor lse = Tensor::empty({row_count(g)}, DType::float64);
  Tensor out;
  dispatch_floating(logits.dtype(), "cross_entropy", [&]<typename T>() {
    cross_entropy_forward(losses.data(), lse.data<double>(), x.data<T>(), t.data<std::int64_t>(), g,
                          ignore_index, label_smoothing);
    if (reduction == Reduction::none) {
      out = Tensor::empty(targets.shape(), logits.dtype());
      for (std::int64_t r = 0; r < row_count(g); ++r) out.data<T>()[r] = static_cast<T>(losses[r]);
      return;
    }
    double total = 0;
    for (double loss : losses) total += loss;
    // mean over zero targets (all ignored) is 0/0 = NaN, as in PyTorch.
    if (reduction == Reduction::mean) total /= static_cast<double>(count);
    out = scalar_tensor(total, logits.dtype());
  });
  if (!should_record({logits})) return out;

  // Save the logits and one logsumexp per row; recompute the softmax in the backward (save
  // memory at the cost of compute: a (B·T, V) probability matrix is the largest tensor of an LM).
  const double scale = reduction == Reduction::mean ? 1.0 / static_cast<double>(count) : 1.0;
  record(out, "cross_entropy", {logits},
         [logits, t, lse, g, scale, reduction, ignore_index, label_smoothing](const Tensor& dout) -> TensorList {
           if (is_grad_enabled()) return {cross_entropy_grad_recorded(logits, t, dout, g, scale, reduction, ignore_index, label_smoothing)};
           const std::int64_t dout_stride = reduction == Reduction::none ? 1 : 0;
           const Tensor x = logits.contiguous();
           const Tensor d = dout.contiguous();
           // The gradient goes over the logits when no one else can see them: a contiguous
           // copy made just now, or logits that only this node holds and that are freed right
           // after it (a training step that does not keep its logits). That saves a (rows, V)
           // buffer at the step's peak, the largest tensor of an LM with a large vocabulary
           // (llm.c writes dlogits over the logits too).
           const bool own_copy = !x.is_same(logits);
           const bool only_here = saved_tensors_freed_after() && logits.impl_ptr().use_count() == 2 &&
                                  logits.impl().storage.use_count() == 1;  // 2: the capture and x
           Tensor dx = own_copy || only_here ? x : Tensor::empty(x.shape(), x.dtype());
           dispatch_floating(x.dtype(), "cross_entropy", [&]<typename T>() {
             cross_entropy_backward(dx.data<T>(), d.data<T>(), dout_stride, scale, x.data<T>(),
                                    t.data<std::int64_t>(), lse.data<double>(), g, ignore_index,
                                    label_smoothing);
           });
           return {dx};
         }, DoubleBackward::supported);
  // forward: the loss is a function of the logits alone, so d loss = Σ_classes G ⊙ dlogits with
  // G its gradient for dout = 1 (per row for reduction none), the recorded backward's formula
  if (forward_rules_wanted()) record_forward(out, [logits, t, g, scale, reduction, ignore_index, label_smoothing,
                       out_shape = out.shape()](const TensorList& tangents) {
    const Tensor G = cross_entropy_grad_recorded(logits, t, ones(out_shape, logits.dtype()), g, scale, reduction,
                                                 ignore_index, label_smoothing);
    const Tensor per_class = mul(G, tangents[0]);
    return reduction == Reduction::none ? sum(per_class, {logits.dim() == 1 ? 0 : 1}) : sum(per_class);
  });
  return out;
}

Tensor mse_loss(const Tensor& x, const Tensor& y, Reduction reduction) {
  // No silent broadcasting: mse_loss(pred (N, 1), target (N)) would average an (N, N) matrix.
  if (x.shape() != y.shape())
    throw ShapeError("mse_loss: input of shape " + shape_str(x.shape()) + " and target of shape " +
                     shape_str(y.shape()) + " must have the same shape");
  const Tensor diff = sub(x, y);
  const Tensor squared = mul(diff, diff);
  switch (reduction) {
    case Reduction::none: return squared;
    case Reduction::sum: return sum(squared);
    case Reduction::mean: return mean(squared);
  }
  throw ValueError("mse_loss: unknown reduction");
}

}  // namespace tapegrad
