// attention.cpp — scaled dot-product attention as one fused op with its own backward: the
// glue of scaled_dot_product_attention and self_attention_packed around two kernel pairs in
// autograd/cpu/ (attention_kernels.hpp),
//   attention_materialized.cpp  S of one pair in a Tq·Tk scratch (any option, short sequences)
//   attention_flash.cpp         tiled online softmax in O(Bq·Bk) (long sequences, no dropout)
// picked by select_attention_kernel (the rule at AttentionKernel, ops.hpp). Both save q, k, v
// and one logsumexp per query row, never P (Tq·Tk per pair); flash also reads the output in
// its backward. A recorded backward pass (create_graph) differentiates the same attention
// composed of differentiable ops instead (attention_composite).
#include <algorithm>
#include <cmath>
#include <optional>
#include <vector>

#include "../cpu/attention_kernels.hpp"
#include "../cpu/blas.hpp"
#include "../cpu/gemm_layout.hpp"
#include "../forward_ad.hpp"
#include "../grad_mode.hpp"
#include "../node.hpp"
#include "../ops.hpp"
#include "../random.hpp"
#include "../recompute.hpp"
#include "attention_choice.hpp"

namespace tapegrad {

using detail::attention_backward;
using detail::attention_forward;
using detail::AttentionConfig;
using detail::AttentionDims;
using detail::draw_keep;
using detail::HeadLayout;

namespace {

constexpr const char* kOp = "scaled_dot_product_attention";

// The ld of t's (T, D) matrices when gemm can read them in place as stored: the kernels fix
// their own transpose flags, so a transposed layout does not do. A dim of size ≤ 1 is never
// stepped, so its stride is free: it gets the one gemm accepts (ld ≥ max(cols, 1)) first.
std::optional<std::int64_t> row_major_ld(const Tensor& t) {
  const std::int64_t rows = t.size(2), cols = t.size(3);
  const std::int64_t row_stride = rows <= 1 ? std::max<std::int64_t>(cols, 1) : t.strides()[2];
  const std::int64_t col_stride = cols <= 1 ? 1 : t.strides()[3];
  const std::optional<GemmLayout> layout = gemm_layout(rows, cols, row_stride, col_stride);
  if (layout && !layout->trans) return layout->ld;
  return std::nullopt;
}

// t itself when gemm can read its matrices in place, otherwise a contiguous copy; group: the
// query heads that read each of t's heads (HeadLayout::group).
Tensor gemm_ready(const Tensor& t, HeadLayout& layout, std::int64_t group = 1) {
  std::optional<std::int64_t> ld = row_major_ld(t);
  const Tensor ready = ld ? t.detach() : t.detach().contiguous();
  // A contiguous copy passes unless it has no columns; nothing is read then, and its own row
  // stride (0) serves.
  if (!ld) ld = row_major_ld(ready).value_or(ready.strides()[2]);
  layout = {ready.strides()[0], ready.strides()[1], *ld, group};
  return ready;
}

AttentionConfig make_config(bool causal, std::int64_t causal_offset, const std::vector<unsigned char>& key_padding,
                            double dropout_p, const std::vector<std::uint64_t>& seeds, double scale) {
  return {causal, causal_offset, key_padding.empty() ? nullptr : key_padding.data(), dropout_p,
          seeds.empty() ? nullptr : seeds.data(), scale};
}

// The layout of a contiguous (B, H, T, D) tensor.
HeadLayout contiguous_layout(std::int64_t H, std::int64_t T, std::int64_t D, std::int64_t group = 1) {
  return {H * T * D, T * D, D, group};
}

// ---- glue

// The kernel pair chosen by select_attention_kernel, with the flash pair's arguments: the
// materialized backward does not read the forward's output (out, lout).
template <typename T>
void run_attention_forward(bool flash, T* out, const HeadLayout& lout, T* lse, const T* q, const HeadLayout& lq,
                           const T* k, const HeadLayout& lk, const T* v, const HeadLayout& lv, const AttentionDims& d,
                           const AttentionConfig& cfg) {
  if (flash)
    detail::flash_attention_forward(out, lout, lse, q, lq, k, lk, v, lv, d, cfg);
  else
    attention_forward(out, lout, lse, q, lq, k, lk, v, lv, d, cfg);
}

template <typename T>
void run_attention_backward(bool flash, T* dq, const HeadLayout& lgq, T* dk, const HeadLayout& lgk, T* dv,
                            const HeadLayout& lgv, const T* dout, const HeadLayout& lo, const T* out,
                            const HeadLayout& lout, const T* q, const HeadLayout& lq, const T* k, const HeadLayout& lk,
                            const T* v, const HeadLayout& lv, const T* lse, const AttentionDims& d,
                            const AttentionConfig& cfg) {
  if (flash)
    detail::flash_attention_backward(dq, lgq, dk, lgk, dv, lgv, dout, lo, out, lout, q, lq, k, lk, v, lv, lse, d, cfg);
  else
    attention_backward(dq, lgq, dk, lgk, dv, lgv, dout, lo, q, lq, k, lk, v, lv, lse, d, cfg);
}

}  // namespace

AttentionKernel detail::select_attention_kernel(const char* op, const AttentionOptions& options, std::int64_t Tq,
                                                std::int64_t Tk) {
  const bool dropout = options.training && options.dropout_p > 0.0;
  switch (options.kernel) {
    case AttentionKernel::materialized:
      return AttentionKernel::materialized;
    case AttentionKernel::flash:
      if (dropout)
        throw ValueError(std::string(op) + ": kernel = AttentionKernel::flash does not support attention dropout "
                         "(dropout_p = " + std::to_string(options.dropout_p) + " with training = true); use "
                         "AttentionKernel::materialized or automatic, or dropout_p = 0");
      return AttentionKernel::flash;
    case AttentionKernel::automatic:
      break;
  }
  // The rule documented at AttentionKernel, measured in attention_flash.cpp: the tiles pay
  // once the scores of a pair no longer fit in cache; a decode step (Tq = 1) is one row.
  if (dropout || Tq <= 1 || Tq * Tk < kFlashAttentionMinScores) return AttentionKernel::materialized;
  return AttentionKernel::flash;
}

namespace {


void check_causal_offset(const char* op, const AttentionOptions& options) {
  if (options.causal_offset < 0)
    throw ValueError(std::string(op) + ": causal_offset must be >= 0, got " + std::to_string(options.causal_offset));
  if (options.causal_offset != 0 && !options.causal)
    throw ValueError(std::string(op) + ": causal_offset = " + std::to_string(options.causal_offset) +
                     " shifts the causal mask, so it needs causal = true");
}

AttentionDims check_attention_args(const Tensor& q, const Tensor& k, const Tensor& v,
                                   const AttentionOptions& options) {
  const std::string shapes = "q " + shape_str(q.shape()) + ", k " + shape_str(k.shape()) + ", v " +
                             shape_str(v.shape());
  if (q.dim() != 4 || k.dim() != 4 || v.dim() != 4)
    throw ShapeError(std::string(kOp) + ": q, k and v must be 4-d (B, H, T, D), got " + shapes);
  if (k.size(0) != q.size(0) || v.size(0) != q.size(0))
    throw ShapeError(std::string(kOp) + ": q, k and v must have the same batch size B, got " + shapes);
  if (v.size(1) != k.size(1) || k.size(1) <= 0 || q.size(1) % k.size(1) != 0)
    throw ShapeError(std::string(kOp) + ": k and v must have the same number of heads Hkv, and it must divide q's "
                     "H (grouped-query attention; Hkv = H is multi-head), got " + shapes);
  if (k.size(3) != q.size(3))
    throw ShapeError(std::string(kOp) + ": q and k must have the same head dim D, got " + shapes);
  if (v.size(2) != k.size(2))
    throw ShapeError(std::string(kOp) + ": k and v must have the same number of keys Tk, got " + shapes);
  if (!is_floating(q.dtype()) || k.dtype() != q.dtype() || v.dtype() != q.dtype())
    throw DTypeError(std::string(kOp) + ": q, k and v must all be float32 or all float64, got " +
                     dtype_name(q.dtype()) + ", " + dtype_name(k.dtype()) + " and " + dtype_name(v.dtype()));
  const AttentionDims d{q.size(0), q.size(1), q.size(2), k.size(2), q.size(3), v.size(3), k.size(1)};
  const Tensor& mask = options.key_padding_mask;
  if (mask.defined() && mask.shape() != Shape{d.B, d.Tk})
    throw ShapeError(std::string(kOp) + ": key_padding_mask must have shape (B, Tk) = " +
                     shape_str({d.B, d.Tk}) + ", got " + shape_str(mask.shape()) + " (" + shapes + ")");
  if (!(options.dropout_p >= 0.0 && options.dropout_p < 1.0))  // also rejects NaN
    throw ValueError(std::string(kOp) + ": dropout_p must be in [0, 1), got " +
                     std::to_string(options.dropout_p));
  check_causal_offset(kOp, options);
  return d;
}

// Plain data for the kernels: the padding mask as bytes, one dropout seed per pair, the scale.
struct AttentionData {
  std::vector<unsigned char> key_padding;
  std::vector<std::uint64_t> seeds;
  double scale = 1.0;
};

AttentionData attention_data(const AttentionOptions& options, const AttentionDims& d) {
  AttentionData data;
  if (options.key_padding_mask.defined())
    for (double m : options.key_padding_mask.to_vector<double>()) data.key_padding.push_back(m != 0.0);
  if (options.training && options.dropout_p > 0.0) {
    // Seeds drawn in pair order on this thread: the masks do not depend on the thread count.
    Generator& gen = options.gen ? *options.gen : default_generator();
    for (std::int64_t pair = 0; pair < d.pairs(); ++pair) data.seeds.push_back(gen.next_u64());
  }
  data.scale = options.scale.value_or(1.0 / std::sqrt(static_cast<double>(d.D)));
  return data;
}

// The same attention composed of differentiable ops, for a recorded backward pass
// (create_graph), which differentiates it (recompute.hpp) since the fused backward is a raw
// loop. The masks and the dropout keep-mask are constants rebuilt from the same data:
//   S = q·kᵀ·scale   P = softmax(S with hidden keys at -inf) · row_has_keys   out = (P ⊙ M)·v
// A row with every key hidden is softmaxed unmasked (finite) and then zeroed, so it has no
// NaN and no gradient, as in the fused kernels.
Tensor attention_composite(const Tensor& q, const Tensor& k_in, const Tensor& v_in, const AttentionDims& d,
                           const AttentionConfig& cfg) {
  Tensor hidden = zeros({d.B, 1, d.Tq, d.Tk}, q.dtype()), has_keys = zeros({d.B, 1, d.Tq, 1}, q.dtype());
  dispatch_floating(q.dtype(), kOp, [&]<typename T>() {
    for (std::int64_t b = 0; b < d.B; ++b)
      for (std::int64_t i = 0; i < d.Tq; ++i) {
        T* row = hidden.data<T>() + (b * d.Tq + i) * d.Tk;
        bool any = false;
        for (std::int64_t j = 0; j < d.Tk; ++j) {
          const bool masked =
              (cfg.causal && j > i + cfg.causal_offset) || (cfg.key_padding && cfg.key_padding[b * d.Tk + j]);
          row[j] = T(masked);
          any = any || !masked;
        }
        if (!any) std::fill(row, row + d.Tk, T(0));
        has_keys.data<T>()[b * d.Tq + i] = T(any);
      }
  });
  // Under GQA the composite repeats each kv head for its G query heads (a copy: this form
  // only runs in a recorded backward; the kernels read the shared heads in place).
  auto repeat_kv = [&](const Tensor& t) {
    if (d.Hkv == d.H) return t;
    const Shape& s = t.shape();  // (B, Hkv, Tk, Dk) -> (B, Hkv, G, Tk, Dk) -> (B, H, Tk, Dk)
    return reshape(expand(unsqueeze(t, 2), {s[0], s[1], d.group(), s[2], s[3]}), {s[0], d.H, s[2], s[3]});
  };
  const Tensor k = repeat_kv(k_in), v = repeat_kv(v_in);
  const Tensor scores = mul(matmul(q, transpose(k, -1, -2)), cfg.scale);
  Tensor probs = mul(softmax(masked_fill(scores, hidden, -INFINITY), -1), has_keys);
  if (cfg.seeds) {
    Tensor keep = Tensor::empty({d.B, d.H, d.Tq, d.Tk}, q.dtype());
    const std::int64_t n = d.Tq * d.Tk;
    std::vector<unsigned char> bits(n);
    dispatch_floating(q.dtype(), kOp, [&]<typename T>() {
      const T keep_scale = static_cast<T>(1.0 / (1.0 - cfg.dropout_p));
      for (std::int64_t pair = 0; pair < d.pairs(); ++pair) {
        draw_keep(bits.data(), n, cfg.dropout_p, cfg.seeds[pair]);
        for (std::int64_t i = 0; i < n; ++i) keep.data<T>()[pair * n + i] = bits[i] ? keep_scale : T(0);
      }
    });
    probs = mul(probs, keep);
  }
  return matmul(probs, v);
}

// The packed form's composite: qkv (B, T, C + 2·Ckv) split into heads by columns [start,
// start + heads·D) -> (B, heads, T, D), attended, and merged back to (B, T, C). Used by both the
// recorded backward and the forward rule of self_attention_packed, so the two differentiate
// the same formula.
Tensor packed_attention_composite(const Tensor& qkv, const AttentionDims& d, std::int64_t C, std::int64_t Ckv,
                                  const AttentionConfig& cfg) {
  auto heads = [&](std::int64_t start, std::int64_t n) {
    return transpose(narrow(qkv, 2, start, n * d.D).reshape({d.B, d.Tq, n, d.D}), 1, 2);
  };
  const Tensor o = attention_composite(heads(0, d.H), heads(C, d.Hkv), heads(C + Ckv, d.Hkv), d, cfg);
  return transpose(o, 1, 2).reshape({d.B, d.Tq, C});
}

}  // namespace

Tensor scaled_dot_product_attention(const Tensor& q_in, const Tensor& k_in, const Tensor& v_in,
                                    const AttentionOptions& options) {
  const AttentionDims d = check_attention_args(q_in, k_in, v_in, options);
  check_blas_core_once();
  HeadLayout lq, lk, lv;
  const Tensor q = gemm_ready(q_in, lq), k = gemm_ready(k_in, lk, d.group()), v = gemm_ready(v_in, lv, d.group());
  const auto [key_padding, seeds, scale] = attention_data(options, d);
  const AttentionConfig cfg =
      make_config(options.causal, options.causal_offset, key_padding, options.dropout_p, seeds, scale);

  const bool flash = detail::select_attention_kernel(kOp, options, d.Tq, d.Tk) == AttentionKernel::flash;
  Tensor out = Tensor::empty({d.B, d.H, d.Tq, d.Dv}, q.dtype());  // every element is written
  Tensor lse = Tensor::empty({d.B, d.H, d.Tq}, q.dtype());
  const HeadLayout lout = contiguous_layout(d.H, d.Tq, d.Dv);
  dispatch_floating(q.dtype(), kOp, [&]<typename T>() {
    run_attention_forward(flash, out.data<T>(), lout, lse.data<T>(), q.data<T>(), lq, k.data<T>(), lk, v.data<T>(), lv,
                          d, cfg);
  });

  if (!should_record({q_in, k_in, v_in})) return out;
  const bool need_q = q_in.requires_grad(), need_k = k_in.requires_grad(), need_v = v_in.requires_grad();
  // The flash backward reads the output (Δ = rowsum(dO ⊙ O)): saved as out.detach(), a new
  // TensorImpl on the same storage with no grad_fn, so the node does not own its own output
  // (no cycle node → out → node) and nothing is copied (softmax.cpp saves its output alike).
  // The node's version check (Saves::inputs_and_output, node.hpp) refuses a backward after a
  // write into it.
  const Tensor saved_out = flash && (need_q || need_k) ? out.detach() : Tensor();
  record(out, kOp, {q_in, k_in, v_in},
         [q_in, k_in, v_in, lse, saved_out, flash, d, key_padding, seeds, causal = options.causal,
          causal_offset = options.causal_offset, p = options.dropout_p, scale, need_q, need_k,
          need_v](const Tensor& dout) -> TensorList {
           // Points into this lambda's own copies of the mask bytes and seeds.
           const AttentionConfig c = make_config(causal, causal_offset, key_padding, p, seeds, scale);
           if (is_grad_enabled())  // recorded (create_graph): backpropagate through the composite
             return detail::backward_by_recomputing(
                 [&](const TensorList& in) { return attention_composite(in[0], in[1], in[2], d, c); },
                 {q_in, k_in, v_in}, dout);
           HeadLayout lo, lq, lk, lv;
           const Tensor dout_ready = gemm_ready(dout, lo);
           // v is only read by dS (for dq, dk); q, k and lse always, to recompute P.
           const Tensor q = gemm_ready(q_in, lq), k = gemm_ready(k_in, lk, d.group());
           const Tensor v = need_q || need_k ? gemm_ready(v_in, lv, d.group()) : Tensor();
           Tensor dq, dk, dv;
           if (need_q) dq = Tensor::empty(q.shape(), q.dtype());  // every element is written
           if (need_k) dk = Tensor::empty(k.shape(), k.dtype());
           if (need_v) dv = Tensor::empty({d.B, d.Hkv, d.Tk, d.Dv}, q.dtype());
           const HeadLayout lgq = contiguous_layout(d.H, d.Tq, d.D), lgk = contiguous_layout(d.Hkv, d.Tk, d.D, d.group()),
                            lgv = contiguous_layout(d.Hkv, d.Tk, d.Dv, d.group());
           dispatch_floating(q.dtype(), kOp, [&]<typename T>() {
             T* dq_ = need_q ? dq.data<T>() : nullptr;
             T* dk_ = need_k ? dk.data<T>() : nullptr;
             T* dv_ = need_v ? dv.data<T>() : nullptr;
             const T* v_ = v.defined() ? v.data<T>() : nullptr;
             run_attention_backward(flash, dq_, lgq, dk_, lgk, dv_, lgv, dout_ready.data<T>(), lo,
                                    saved_out.defined() ? saved_out.data<T>() : nullptr,
                                    contiguous_layout(d.H, d.Tq, d.Dv), q.data<T>(), lq, k.data<T>(), lk, v_, lv,
                                    lse.data<T>(), d, c);
           });
           return {dq, dk, dv};
         }, DoubleBackward::supported);
  // forward: the jvp of the composite, softmax(q·kᵀ·scale + mask)·v written with differentiable ops
  if (forward_rules_wanted()) record_forward(out, [q_in, k_in, v_in, d, key_padding, seeds, causal = options.causal,
                       causal_offset = options.causal_offset, p = options.dropout_p, scale](const TensorList& t) {
    const AttentionConfig c = make_config(causal, causal_offset, key_padding, p, seeds, scale);
    return detail::jvp_of([&](const TensorList& in) { return attention_composite(in[0], in[1], in[2], d, c); },
                          {q_in, k_in, v_in}, t);
  });
  return out;
}

}  // namespace tapegrad

namespace tapegrad {

// The same kernels, reading q, k and v in place from the packed projection (B, T, W) — q in
// columns [0, C), k in [C, C + Ckv), v in [C + Ckv, W), with C = H·D, Ckv = Hkv·D and
// W = C + 2·Ckv (W = 3C without GQA); head h in columns [h·D, (h+1)·D) of its part — and
// writing the heads merged, (B, T, C). The backward writes dqkv in the same packed layout.
// This saves what splitting and merging heads around the 4-d op costs: a copy to merge the
// heads in the forward, and in the backward a zero-filled (B, T, W) per part plus their sum.
Tensor self_attention_packed(const Tensor& qkv_in, std::int64_t n_heads, const AttentionOptions& options,
                             std::int64_t n_kv_heads) {
  constexpr const char* kPackedOp = "self_attention_packed";
  const std::int64_t H = n_heads, Hkv = n_kv_heads == 0 ? n_heads : n_kv_heads;
  if (H <= 0 || Hkv <= 0 || H % Hkv != 0)
    throw ValueError(std::string(kPackedOp) + ": n_kv_heads (" + std::to_string(n_kv_heads) +
                     ") must divide n_heads (" + std::to_string(n_heads) + "); 0 means n_heads");
  if (qkv_in.dim() != 3 || qkv_in.size(2) % (H + 2 * Hkv) != 0)
    throw ShapeError(std::string(kPackedOp) + ": qkv must be (B, T, (n_heads + 2·n_kv_heads)·D) with n_heads = " +
                     std::to_string(H) + ", n_kv_heads = " + std::to_string(Hkv) + ", got " + shape_str(qkv_in.shape()));
  if (!is_floating(qkv_in.dtype()))
    throw DTypeError(std::string(kPackedOp) + ": qkv must be float32 or float64, got " + dtype_name(qkv_in.dtype()));
  const std::int64_t B = qkv_in.size(0), T = qkv_in.size(1), W = qkv_in.size(2), D = W / (H + 2 * Hkv);
  const std::int64_t C = H * D, Ckv = Hkv * D;
  const AttentionDims d{B, H, T, T, D, D, Hkv};
  const Tensor& mask = options.key_padding_mask;
  if (mask.defined() && mask.shape() != Shape{B, T})
    throw ShapeError(std::string(kPackedOp) + ": key_padding_mask must have shape (B, T) = " + shape_str({B, T}) +
                     ", got " + shape_str(mask.shape()));
  if (!(options.dropout_p >= 0.0 && options.dropout_p < 1.0))
    throw ValueError(std::string(kPackedOp) + ": dropout_p must be in [0, 1), got " + std::to_string(options.dropout_p));
  check_causal_offset(kPackedOp, options);
  check_blas_core_once();
  const Tensor qkv = qkv_in.contiguous().detach();
  // Row t of head h of q starts at column h·D of row t: ld = W; k and v are C and C + Ckv
  // further, each of their heads read by G = H / Hkv query heads.
  const HeadLayout packed_q{T * W, D, W}, packed_kv{T * W, D, W, d.group()}, merged{T * C, D, C};
  const auto [key_padding, seeds, scale] = attention_data(options, d);
  const AttentionConfig cfg =
      make_config(options.causal, options.causal_offset, key_padding, options.dropout_p, seeds, scale);

  const bool flash = detail::select_attention_kernel(kPackedOp, options, T, T) == AttentionKernel::flash;
  Tensor out = Tensor::empty({B, T, C}, qkv.dtype());  // every element is written
  Tensor lse = Tensor::empty({B, H, T}, qkv.dtype());
  dispatch_floating(qkv.dtype(), kPackedOp, [&]<typename T_>() {
    const T_* p = qkv.data<T_>();
    run_attention_forward(flash, out.data<T_>(), merged, lse.data<T_>(), p, packed_q, p + C, packed_kv, p + C + Ckv,
                          packed_kv, d, cfg);
  });
  if (!should_record({qkv_in})) return out;
  // The flash backward reads the output: saved detached, as in scaled_dot_product_attention.
  const Tensor saved_out = flash ? out.detach() : Tensor();
  record(out, kPackedOp, {qkv_in},
         [qkv_in, lse, saved_out, flash, packed_q, packed_kv, merged, d, C, Ckv, key_padding, seeds, causal = options.causal,
          causal_offset = options.causal_offset, p = options.dropout_p, scale](const Tensor& dout) -> TensorList {
           const AttentionConfig c = make_config(causal, causal_offset, key_padding, p, seeds, scale);
           if (is_grad_enabled())  // recorded (create_graph): the split into heads, composed
             return detail::backward_by_recomputing(
                 [&](const TensorList& in) { return packed_attention_composite(in[0], d, C, Ckv, c); }, {qkv_in}, dout);
           const Tensor qkv = qkv_in.contiguous();
           const Tensor g = dout.contiguous();
           Tensor dqkv = Tensor::empty(qkv.shape(), qkv.dtype());  // dq, dk, dv fill every column
           dispatch_floating(qkv.dtype(), kPackedOp, [&]<typename T_>() {
             const T_* x = qkv.data<T_>();
             T_* dx = dqkv.data<T_>();
             run_attention_backward(flash, dx, packed_q, dx + C, packed_kv, dx + C + Ckv, packed_kv, g.data<T_>(), merged,
                                    saved_out.defined() ? saved_out.data<T_>() : nullptr, merged, x, packed_q, x + C,
                                    packed_kv, x + C + Ckv, packed_kv, lse.data<T_>(), d, c);
           });
           return {dqkv};
         }, DoubleBackward::supported);
  // forward: the jvp of the composite on the split heads, as the recorded backward composes it
  if (forward_rules_wanted()) record_forward(out, [qkv_in, d, C, Ckv, key_padding, seeds, causal = options.causal,
                       causal_offset = options.causal_offset, p = options.dropout_p, scale](const TensorList& t) {
    const AttentionConfig c = make_config(causal, causal_offset, key_padding, p, seeds, scale);
    return detail::jvp_of([&](const TensorList& in) { return packed_attention_composite(in[0], d, C, Ckv, c); },
                          {qkv_in}, t);
  });
  return out;
}

}  // namespace tapegrad
