// matmul.cpp — matrix products on BLAS gemm, backward by transpose flags.
//
//   C = A · B         A: (M, K), B: (K, N), C: (M, N)
//   dA = dC · Bᵀ      (M, N)·(N, K) -> (M, K)
//   dB = Aᵀ · dC      (K, M)·(M, N) -> (K, N)
// No transpose is ever materialized: gemm reads Bᵀ and Aᵀ through its transpose flags, and an
// input that is itself a transposed view (x.transpose(-1, -2)) is passed with the flag set
// instead of being copied. Batched inputs (..., M, K) @ (..., K, N) broadcast their batch dims.
#include <optional>
#include <vector>

#include "../cpu/blas.hpp"
#include "../cpu/gemm_layout.hpp"
#include "../cpu/linear_kernels.hpp"
#include "../grad_mode.hpp"
#include "../forward_ad.hpp"
#include "../node.hpp"
#include "../ops.hpp"
#include "../saved_tensor.hpp"
#include "../shape.hpp"
#include "data_or_null.hpp"

namespace tapegrad {

namespace {

// How gemm can read the matrices of t (its last two dims) in place, as stored or through the
// transpose flag (a transposed view); std::nullopt when it cannot.
std::optional<GemmLayout> matrix_layout(const Tensor& t) {
  const std::int64_t n = t.dim();
  return gemm_layout(t.shape()[n - 2], t.shape()[n - 1], t.strides()[n - 2], t.strides()[n - 1]);
}

// A tensor whose matrices gemm can read in place: t itself, or a contiguous copy.
Tensor gemm_ready(const Tensor& t, GemmLayout& layout) {
  if (const auto in_place = matrix_layout(t)) {
    layout = *in_place;
    return t;
  }
  Tensor c = t.contiguous();
  // A contiguous copy fails the test only when it has no columns; batched_gemm then returns
  // before any gemm call, so the default layout is never read.
  layout = matrix_layout(c).value_or(GemmLayout{});
  return c;
}

// For each matrix of a batch of out_batch shape, the element offset of the operand's matrix
// (batch dims broadcast with stride 0).
std::vector<std::int64_t> batch_offsets(const Tensor& t, const Shape& out_batch) {
  const Shape batch(t.shape().begin(), t.shape().end() - 2);
  const Shape batch_strides(t.strides().begin(), t.strides().end() - 2);
  const Shape strides = broadcast_strides(batch, batch_strides, out_batch);
  std::vector<std::int64_t> offsets(shape_numel(out_batch));
  for_each_strided(out_batch, strides, [&](std::int64_t i, std::int64_t off) { offsets[i] = off; });
  return offsets;
}

// C[b] = op(A[b]) · op(B[b]) for every matrix b of the broadcast batch; C is contiguous.
Tensor batched_gemm(const Tensor& a_in, const Tensor& b_in, const char* op) {
  GemmLayout la, lb;
  const Tensor a = gemm_ready(a_in, la), b = gemm_ready(b_in, lb);
  const std::int64_t M = a.size(-2), K = a.size(-1), N = b.size(-1);
  const Shape a_batch(a.shape().begin(), a.shape().end() - 2);
  const Shape b_batch(b.shape().begin(), b.shape().end() - 2);
  // The batch dims are all but each input's last two (its matrices): name them as such, and
  // the whole shapes, rather than broadcast_shapes' "[8] and [7]".
  for (std::size_t i = 0; i < std::min(a_batch.size(), b_batch.size()); ++i) {  // i counts from the right
    const std::int64_t sa = a_batch[a_batch.size() - 1 - i], sb = b_batch[b_batch.size() - 1 - i];
    if (sa != sb && sa != 1 && sb != 1)
      throw ShapeError(std::string(op) + ": shapes " + shape_str(a.shape()) + " and " + shape_str(b.shape()) +
                       " have batch dims " + shape_str(a_batch) + " and " + shape_str(b_batch) +
                       " that cannot be broadcast (" + std::to_string(sa) + " vs " + std::to_string(sb) + " in batch dim " +
                       std::to_string(i + 1) + " from the right); the last two dims of each input are its matrices, "
                       "and the dims before them must be equal or 1");
  }
  const Shape out_batch = broadcast_shapes(a_batch, b_batch, op);
  Shape out_shape = out_batch;
  out_shape.push_back(M);
  out_shape.push_back(N);
  Tensor c = Tensor::empty(out_shape, a.dtype(), K == 0);  // K = 0: the product is all zeros
  if (K == 0 || c.numel() == 0) return c;
  const std::vector<std::int64_t> oa = batch_offsets(a, out_batch), ob = batch_offsets(b, out_batch);
  dispatch_floating(a.dtype(), op, [&]<typename T>() {
    const T* pa = a.data<T>();
    const T* pb = b.data<T>();
    T* pc = c.data<T>();
    for (std::size_t i = 0; i < oa.size(); ++i)
      blas::gemm<T>(la.trans, lb.trans, M, N, K, T(1), pa + oa[i], la.ld, pb + ob[i], lb.ld, T(0),
                    pc + static_cast<std::int64_t>(i) * M * N, N);
  });
  return c;
}

// The number of rows when all dims but the last are folded together.
std::int64_t rows_of(const Tensor& t) {
  std::int64_t rows = 1;
  for (std::int64_t d = 0; d + 1 < t.dim(); ++d) rows *= t.shape()[d];
  return rows;
}

void check_matmul_shapes(const Tensor& a, const Tensor& b, const char* op) {
  if (a.dtype() != b.dtype())
    throw DTypeError(std::string(op) + ": dtypes differ (" + dtype_name(a.dtype()) + " and " +
                     dtype_name(b.dtype()) + ")");
  if (a.dim() < 1 || b.dim() < 1)
    throw ShapeError(std::string(op) + ": both inputs need at least 1 dim, got shapes " +
                     shape_str(a.shape()) + " and " + shape_str(b.shape()));
  if (a.size(-1) != b.size(b.dim() == 1 ? -1 : -2))
    throw ShapeError(std::string(op) + ": shapes " + shape_str(a.shape()) + " and " + shape_str(b.shape()) +
                     " cannot be multiplied (" + std::to_string(a.size(-1)) + " columns vs " +
                     std::to_string(b.size(b.dim() == 1 ? -1 : -2)) + " rows)");
}

}  // namespace

Tensor matmul(const Tensor& a, const Tensor& b) {
  check_matmul_shapes(a, b, "matmul");
  check_blas_core_once();
  // 1-d operands as torch.matmul: a vector on the left is a row, on the right a column,
  // and that dim is removed from the result.
  if (a.dim() == 1 && b.dim() == 1) return matmul(unsqueeze(a, 0), unsqueeze(b, 1)).reshape({});
  if (a.dim() == 1) return squeeze(matmul(unsqueeze(a, 0), b), -2);
  if (b.dim() == 1) return squeeze(matmul(a, unsqueeze(b, 1)), -1);
  // (..., M, K) @ (K, N) with a contiguous: one gemm over all the rows (..·M, K) instead of
  // one per batch; dB then comes out of a single gemm too.
  if (a.dim() > 2 && b.dim() == 2 && a.is_contiguous()) {
    Shape out_shape = a.shape();
    out_shape.back() = b.size(1);
    return matmul(a.reshape({rows_of(a), a.size(-1)}), b).reshape(out_shape);
  }

  Tensor out = batched_gemm(a, b, "matmul");
  if (!should_record({a, b})) return out;
  const bool need_a = a.requires_grad(), need_b = b.requires_grad();
  record(out, "matmul", {a, b},
         [a = need_b ? a : Tensor(), b = need_a ? b : Tensor(), need_a, need_b,
          sa = a.shape(), sb = b.shape()](const Tensor& dout) -> TensorList {
           Tensor da, db;
           if (is_grad_enabled()) {  // recorded (create_graph): the same products as matmul ops
             if (need_a) da = sum_to_shape(matmul(dout, transpose(b, -1, -2)), sa);
             if (need_b) db = sum_to_shape(matmul(transpose(a, -1, -2), dout), sb);
             return {da, db};
           }
           // dA (..., M, K) = dC (..., M, N) · Bᵀ (..., N, K); summed over broadcast batch dims
           if (need_a) da = sum_to_shape(batched_gemm(dout, transpose(b, -1, -2), "matmul backward"), sa);
           // dB (..., K, N) = Aᵀ (..., K, M) · dC (..., M, N)
           if (need_b) db = sum_to_shape(batched_gemm(transpose(a, -1, -2), dout, "matmul backward"), sb);
           return {da, db};
         }, DoubleBackward::supported, Saves::inputs);
  // forward: the product rule, d(AB) = dA·B + A·dB
  if (forward_rules_wanted()) record_forward(out, [a, b](const TensorList& t) {
    return detail::tangent_sum(t[0].defined() ? matmul(t[0], b) : Tensor(), t[1].defined() ? matmul(a, t[1]) : Tensor());
  });
  return out;
}

Tensor matmul_naive(const Tensor& a, const Tensor& b) {
  if (a.dim() != 2 || b.dim() != 2)
    throw ShapeError("matmul_naive: expects 2-d inputs, got shapes " + shape_str(a.shape()) + " and " +
                     shape_str(b.shape()));
  check_matmul_shapes(a, b, "matmul_naive");
  const std::int64_t M = a.size(0), K = a.size(1), N = b.size(1);
  const std::vector<double> va = a.to_vector(), vb = b.to_vector();
  std::vector<double> vc(M * N, 0.0);
  for (std::int64_t i = 0; i < M; ++i)
    for (std::int64_t j = 0; j < N; ++j)
      for (std::int64_t k = 0; k < K; ++k) vc[i * N + j] += va[i * K + k] * vb[k * N + j];
  return tensor(vc, {M, N}, a.dtype());
}

Tensor linear(const Tensor& x, const Tensor& weight, const Tensor& bias) {
  // y (N, out) = x (N, in) · weightᵀ (in, out) + bias (out); leading dims of x are folded into N.
  if (weight.dim() != 2)
    throw ShapeError("linear: weight must be 2-d (out_features, in_features), got " + shape_str(weight.shape()));
  if (x.dim() < 1 || x.size(-1) != weight.size(1))
    throw ShapeError("linear: input of shape " + shape_str(x.shape()) + " does not match weight of shape " +
                     shape_str(weight.shape()) + " (expected last dim " + std::to_string(weight.size(1)) + ")");
  if (bias.defined() && (bias.dim() != 1 || bias.size(0) != weight.size(0)))
    throw ShapeError("linear: bias of shape " + shape_str(bias.shape()) + " does not match weight of shape " +
                     shape_str(weight.shape()) + " (expected [" + std::to_string(weight.size(0)) + "])");
  if (x.dtype() != weight.dtype() || (bias.defined() && bias.dtype() != weight.dtype()))
    throw DTypeError(std::string("linear: dtypes differ (input ") + dtype_name(x.dtype()) + ", weight " +
                     dtype_name(weight.dtype()) +
                     (bias.defined() ? std::string(", bias ") + dtype_name(bias.dtype()) : std::string()) + ")");
  check_blas_core_once();
  const std::int64_t in = weight.size(1), out_features = weight.size(0);
  const Tensor x2 = x.contiguous();
  const std::int64_t N = rows_of(x2);
  const Tensor w = weight.contiguous();
  Shape out_shape = x.shape();
  out_shape.back() = out_features;
  Tensor y = Tensor::empty(out_shape, x.dtype());
  const Tensor bc = bias.defined() ? bias.contiguous() : Tensor();
  dispatch_floating(x.dtype(), "linear", [&]<typename T>() {
    // every row starts from the bias, then gemm adds x·Wᵀ (beta = 1); zeros when in = 0 and no bias
    linear_forward(y.data<T>(), x2.data<T>(), w.data<T>(), data_or_null<T>(bc), N, in, out_features);
  });
  if (!should_record({x, weight, bias})) return y;
  const bool need_x = x.requires_grad(), need_w = weight.requires_grad();
  const bool need_b = bias.defined() && bias.requires_grad();
  record(y, "linear", {x, weight, bias},
         // x for dW: kept, or made again when it is a norm's output (saved_tensor.hpp)
         [saved_x = need_w ? SavedTensor(x) : SavedTensor(), weight = need_x ? weight : Tensor(), need_x, need_w,
          need_b, x_shape = x.shape(), N, in, out_features](const Tensor& dout) -> TensorList {
           const Tensor x = saved_x.get();
           const Tensor dy = dout.contiguous();
           Tensor dx, dw, db;
           if (is_grad_enabled()) {  // recorded (create_graph): the same products as matmul ops
             const Tensor dy2 = dy.reshape({N, out_features});
             if (need_x) dx = matmul(dy, weight);
             if (need_w) dw = matmul(transpose(dy2, 0, 1), x.reshape({N, in}));
             if (need_b) db = sum(dy2, {0});
             return {dx, dw, db};
           }
           const Tensor x2 = need_w ? x.contiguous() : Tensor(), w = need_x ? weight.contiguous() : Tensor();
           dispatch_floating(dy.dtype(), "linear backward", [&]<typename T>() {
             if (need_x) {  // dx (N, in) = dy (N, out) · W (out, in)
               // zero-filled only when gemm is skipped; otherwise gemm overwrites it (beta = 0)
               dx = Tensor::empty(x_shape, dy.dtype(), N == 0 || out_features == 0);
               linear_grad_input(dx.data<T>(), dy.data<T>(), w.data<T>(), N, in, out_features);
             }
             if (need_w) {  // dW (out, in) = dyᵀ (out, N) · x (N, in)
               dw = Tensor::empty({out_features, in}, dy.dtype(), N == 0);
               linear_grad_weight(dw.data<T>(), dy.data<T>(), x2.data<T>(), N, in, out_features);
             }
           });
           if (need_b) db = sum(dy.reshape({N, out_features}), {0});  // db (out) = Σ_rows dy
           return {dx, dw, db};
         }, DoubleBackward::supported, Saves::inputs);
  // forward: d(x·Wᵀ + b) = dx·Wᵀ + x·dWᵀ + db
  if (forward_rules_wanted()) record_forward(y, [x, weight, out_shape](const TensorList& t) {
    const Tensor dy = detail::tangent_sum(t[0].defined() ? linear(t[0], weight) : Tensor(),
                                          t[1].defined() ? linear(x, t[1]) : Tensor());
    return detail::tangent_sum(dy, detail::tangent_to_shape(t.size() > 2 ? t[2] : Tensor(), out_shape));
  });
  return y;
}

}  // namespace tapegrad
