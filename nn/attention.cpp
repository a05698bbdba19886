// attention.cpp — MultiHeadAttention on the fused attention op.
#include "attention.hpp"

#include <algorithm>
#include <cmath>

#include "../autograd/grad_mode.hpp"
#include "../autograd/ops.hpp"
#include "ngpt.hpp"

namespace tapegrad::nn {

std::string qk_norm_name(QkNorm n) {
  switch (n) {
    case QkNorm::none: return "none";
    case QkNorm::layernorm: return "layernorm";
    case QkNorm::rmsnorm: return "rmsnorm";
  }
  return "?";
}

QkNorm qk_norm_from_name(const std::string& name) {
  for (QkNorm n : {QkNorm::none, QkNorm::layernorm, QkNorm::rmsnorm})
    if (qk_norm_name(n) == name) return n;
  throw ValueError("unknown qk_norm '" + name + "' (expected none, layernorm or rmsnorm)");
}

MultiHeadAttention::MultiHeadAttention(const MultiHeadAttentionOptions& o) : Module("MultiHeadAttention"), options(o) {
  if (o.d_model() <= 0 || o.n_heads() <= 0 || o.d_model() % o.n_heads() != 0)
    throw ValueError("MultiHeadAttention: d_model (" + std::to_string(o.d_model()) +
                     ") must be a positive multiple of n_heads (" + std::to_string(o.n_heads()) + ")");
  if (o.n_kv_heads() < 0 || o.n_heads() % o.kv_heads() != 0)
    throw ValueError("MultiHeadAttention: n_kv_heads (" + std::to_string(o.n_kv_heads()) + ") must divide n_heads (" +
                     std::to_string(o.n_heads()) + "); 0 means n_heads");
  if (!(o.attn_dropout() >= 0 && o.attn_dropout() < 1))
    throw ValueError("MultiHeadAttention: attn_dropout must be in [0, 1), got " + std::to_string(o.attn_dropout()));
  if (o.rope() && o.head_dim() % 2 != 0)
    throw ValueError("MultiHeadAttention: rope rotates pairs of coordinates, so the head dim d_model / n_heads = " +
                     std::to_string(o.head_dim()) + " must be even");
  if (o.rope() && o.cross())
    throw ValueError("MultiHeadAttention: rope applies to self-attention (queries and keys of one sequence), "
                     "not to cross-attention");
  if (o.ngpt()) {
    const char* clash = o.cross() ? "cross-attention (it is nGPT's self-attention)"
                        : o.bias() ? "bias (nGPT's matrices are unit vectors along d_model, with no bias)"
                        : o.qk_norm() != QkNorm::none ? "qk_norm (ngpt normalizes q and k itself)"
                        : o.kv_heads() != o.n_heads() ? "n_kv_heads (s_qk scales each query head and its own key head)"
                                                      : nullptr;
    if (clash) throw ValueError(std::string("MultiHeadAttention: ngpt does not go with ") + clash);
  }
  const std::int64_t C = o.d_model(), kv_dim = o.kv_dim() > 0 ? o.kv_dim() : C, D = o.head_dim();
  const std::int64_t Ckv = o.kv_heads() * D;  // the width of k and of v
  auto make = [&](std::int64_t in, std::int64_t out) {
    return std::make_shared<Linear>(LinearOptions(in, out).bias(o.bias()).dtype(o.dtype()));
  };
  if (o.cross()) {
    q_proj = register_module("q_proj", make(C, C));
    kv_proj = register_module("kv_proj", make(kv_dim, 2 * Ckv));
  } else {
    qkv = register_module("qkv", make(C, C + 2 * Ckv));
  }
  out_proj = register_module("out_proj", make(C, C));
  if (o.qk_norm() != QkNorm::none) {
    auto make_norm = [&]() -> std::shared_ptr<Norm> {
      const NormOptions no = NormOptions(D).eps(o.qk_norm_eps()).bias(o.bias()).dtype(o.dtype());
      if (o.qk_norm() == QkNorm::rmsnorm) return std::make_shared<RMSNorm>(no);
      return std::make_shared<LayerNorm>(no);
    };
    q_norm = register_module("q_norm", make_norm());
    k_norm = register_module("k_norm", make_norm());
  }
  if (o.ngpt()) s_qk = register_parameter("s_qk", full({C}, ngpt_s_qk(C).scale, o.dtype()));
  resid_drop = register_module("resid_drop", std::make_shared<Dropout>(o.resid_dropout()));
}

Tensor MultiHeadAttention::split_heads(const Tensor& x, std::int64_t n) const {
  const std::int64_t B = x.size(0), T = x.size(1), D = options.head_dim();
  return x.reshape({B, T, n, D}).transpose(1, 2);  // (B, T, n, D) -> (B, n, T, D), a view
}

Tensor MultiHeadAttention::prepare_qk(const Tensor& packed, std::int64_t position) {
  const std::int64_t B = packed.size(0), T = packed.size(1), H = options.n_heads(), Hkv = options.kv_heads();
  Tensor heads = packed.reshape({B, T, H + 2 * Hkv, options.head_dim()});  // [q heads | k heads | v heads]
  if (q_norm) {
    const Tensor q = q_norm->forward(narrow(heads, 2, 0, H)), k = k_norm->forward(narrow(heads, 2, H, Hkv));
    heads = cat({q, k, narrow(heads, 2, H + Hkv, Hkv)}, 2);
  }
  if (options.rope()) {
    RotaryOptions r;
    r.theta = options.rope_theta();
    r.interleaved = options.rope_interleaved();
    r.offset = position;
    r.rotate_heads = H + Hkv;  // q and k; v passes through
    heads = rotary_embedding(heads, r);
  }
  if (options.ngpt()) {  // after rope, as NVIDIA/ngpt: s_qk is per dim, and rope mixes dims in pairs
    const Tensor s = mul(s_qk, ngpt_s_qk(options.d_model()).factor()).reshape({H, options.head_dim()});  // (H, D)
    const Tensor q = mul(s, unit_norm(narrow(heads, 2, 0, H))), k = mul(s, unit_norm(narrow(heads, 2, H, Hkv)));
    heads = cat({q, k, narrow(heads, 2, H + Hkv, Hkv)}, 2);
  }
  return heads.reshape(packed.shape());
}

namespace {
// The attention op's settings of a module (causal, dropout, the ngpt scale).
AttentionOptions attention_options(const MultiHeadAttentionOptions& o, bool training, bool causal) {
  AttentionOptions a;
  a.causal = causal;
  a.dropout_p = o.attn_dropout();
  a.training = training;
  // nGPT: q·k of unit vectors is a cosine; √D (not 1/√D) gives the softmax its range back
  if (o.ngpt()) a.scale = std::sqrt(static_cast<double>(o.head_dim()));
  return a;
}
}  // namespace

Tensor MultiHeadAttention::attend(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& key_padding_mask,
                                  bool causal, std::int64_t causal_offset) {
  AttentionOptions a = attention_options(options, is_training(), causal);
  a.causal_offset = causal_offset;
  a.key_padding_mask = key_padding_mask;
  const Tensor heads = scaled_dot_product_attention(q, k, v, a);  // (B, H, Tq, D)
  const std::int64_t B = heads.size(0), Tq = heads.size(2);
  // (B, H, Tq, D) -> (B, Tq, H, D) -> (B, Tq, C)
  const Tensor merged = heads.transpose(1, 2).reshape({B, Tq, options.d_model()});
  return resid_drop->forward(out_proj->forward(merged));
}

Tensor MultiHeadAttention::attend_cached(const Tensor& packed, KVCache& cache, std::int64_t layer) {
  const std::int64_t B = packed.size(0), Tn = packed.size(1), H = options.n_heads(), Hkv = options.kv_heads();
  const Tensor heads = packed.reshape({B, Tn, H + 2 * Hkv, options.head_dim()});  // [q | k | v] heads
  // heads [start, start + n) -> (B, n, Tn, D), a view: the kernel and the cache read it in place
  auto part = [&](std::int64_t start, std::int64_t n) { return narrow(heads, 2, start, n).transpose(1, 2); };
  const std::int64_t cached = cache.length();  // Tk − Tq: the keys before the new queries
  const auto [k, v] = cache.store(layer, part(H, Hkv), part(H + Hkv, Hkv));  // (B, Hkv, cached + Tn, D)
  const bool causal = options.causal();
  return attend(part(0, H), k, v, Tensor(), causal, causal ? cached : 0);
}

namespace {
void check_input(const Tensor& x, std::int64_t C, const char* what) {
  if (x.dim() != 3 || x.size(2) != C)
    throw ShapeError(std::string("MultiHeadAttention: ") + what + " must be (B, T, " + std::to_string(C) +
                     "), got " + shape_str(x.shape()));
}
}  // namespace

Tensor MultiHeadAttention::forward(const Tensor& input, const Tensor& padding_mask, std::int64_t position,
                                   KVCache* cache, std::int64_t layer,
                                   const std::function<Tensor(const Tensor&)>& values) {
  Tensor x = input, key_padding_mask = padding_mask;
  ForwardCall call(*this, {&x, &key_padding_mask});
  if (options.cross()) throw ValueError("MultiHeadAttention: this module does cross-attention; call forward_cross");
  check_input(x, options.d_model(), "x");
  if (position < 0) throw ValueError("MultiHeadAttention: position must be >= 0, got " + std::to_string(position));
  if (cache) {
    // Storing into the cache copies values and records nothing: no gradient could flow.
    const std::vector<Tensor> params = parameters();
    const bool wants_grad = x.requires_grad() || std::any_of(params.begin(), params.end(),
                                                             [](const Tensor& p) { return p.requires_grad(); });
    if (is_grad_enabled() && wants_grad)
      throw ValueError("MultiHeadAttention: the KV cache path is inference only (not differentiable); run it under "
                       "NoGradGuard, or leave the cache out to train");
    if (key_padding_mask.defined())
      throw ValueError("MultiHeadAttention: the KV cache path takes no key_padding_mask");
    if (position != cache->length())
      throw ValueError("MultiHeadAttention: position (" + std::to_string(position) +
                       ") must be the cache's length (" + std::to_string(cache->length()) + "), where x's tokens go");
  }
  // The fused op reads the heads in place from qkv's output and writes them merged.
  AttentionOptions a = attention_options(options, is_training(), options.causal());
  a.key_padding_mask = key_padding_mask;
  Tensor packed = qkv->forward(x);  // (B, T, (H + 2·Hkv)·D)
  if (values) {  // [q | k | v] -> [q | k | values(v)]
    const std::int64_t qk = (options.n_heads() + options.kv_heads()) * options.head_dim();
    const Tensor v = values(narrow(packed, 2, qk, options.kv_heads() * options.head_dim()));
    packed = cat({narrow(packed, 2, 0, qk), v}, 2);
  }
  if (q_norm || options.rope() || options.ngpt()) packed = prepare_qk(packed, position);
  if (cache) return call.output(attend_cached(packed, *cache, layer));
  const Tensor merged = self_attention_packed(packed, options.n_heads(), a, options.kv_heads());  // (B, T, C)
  return call.output(resid_drop->forward(out_proj->forward(merged)));
}

Tensor MultiHeadAttention::forward_cross(const Tensor& input, const Tensor& memory_in, const Tensor& memory_mask) {
  Tensor x = input, memory = memory_in, memory_padding_mask = memory_mask;
  ForwardCall call(*this, {&x, &memory, &memory_padding_mask});
  if (!options.cross()) throw ValueError("MultiHeadAttention: this module does self-attention; call forward");
  check_input(x, options.d_model(), "x");
  check_input(memory, options.kv_dim() > 0 ? options.kv_dim() : options.d_model(), "memory");
  if (memory.size(0) != x.size(0))
    throw ShapeError("MultiHeadAttention: batch sizes differ, x " + shape_str(x.shape()) + " and memory " +
                     shape_str(memory.shape()));
  const std::int64_t H = options.n_heads(), Hkv = options.kv_heads(), D = options.head_dim();
  Tensor q = split_heads(q_proj->forward(x), H);  // (B, H, Tq, D)
  // (B, Tk, 2·Hkv·D) = [k | v] -> (B, Tk, 2, Hkv, D): k and v are views of it, (B, Hkv, Tk, D)
  const Tensor kv = kv_proj->forward(memory).reshape({x.size(0), memory.size(1), 2, Hkv, D});
  auto part = [&](std::int64_t i) { return squeeze(narrow(kv, 2, i, 1), 2).transpose(1, 2); };
  Tensor k = part(0), v = part(1);
  if (q_norm) q = q_norm->forward(q), k = k_norm->forward(k);
  return call.output(attend(q, k, v, memory_padding_mask, false));
}

std::string MultiHeadAttention::extra_repr() const {
  return "d_model=" + std::to_string(options.d_model()) + ", n_heads=" + std::to_string(options.n_heads()) +
         (options.kv_heads() != options.n_heads() ? ", n_kv_heads=" + std::to_string(options.kv_heads()) : "") +
         (options.causal() ? ", causal" : "") + (options.cross() ? ", cross" : "") +
         (options.qk_norm() != QkNorm::none ? ", qk_norm=" + qk_norm_name(options.qk_norm()) : "") +
         (options.rope() ? ", rope" : "") + (options.ngpt() ? ", ngpt" : "");
}

}  // namespace tapegrad::nn
