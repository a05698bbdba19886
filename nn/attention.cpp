// attention.cpp — MultiHeadAttention on the fused attention op.
#include "attention.hpp"

#include "../autograd/ops.hpp"

namespace tapegrad::nn {

MultiHeadAttention::MultiHeadAttention(const MultiHeadAttentionOptions& o) : Module("MultiHeadAttention"), options(o) {
  if (o.d_model() <= 0 || o.n_heads() <= 0 || o.d_model() % o.n_heads() != 0)
    throw ValueError("MultiHeadAttention: d_model (" + std::to_string(o.d_model()) +
                     ") must be a positive multiple of n_heads (" + std::to_string(o.n_heads()) + ")");
  if (!(o.attn_dropout() >= 0 && o.attn_dropout() < 1))
    throw ValueError("MultiHeadAttention: attn_dropout must be in [0, 1), got " + std::to_string(o.attn_dropout()));
  const std::int64_t C = o.d_model(), kv_dim = o.kv_dim() > 0 ? o.kv_dim() : C;
  auto make = [&](std::int64_t in, std::int64_t out) {
    return std::make_shared<Linear>(LinearOptions(in, out).bias(o.bias()).dtype(o.dtype()));
  };
  if (o.cross()) {
    q_proj = register_module("q_proj", make(C, C));
    kv_proj = register_module("kv_proj", make(kv_dim, 2 * C));
  } else {
    qkv = register_module("qkv", make(C, 3 * C));
  }
  out_proj = register_module("out_proj", make(C, C));
  resid_drop = register_module("resid_drop", std::make_shared<Dropout>(o.resid_dropout()));
}

TensorList MultiHeadAttention::split_heads(const Tensor& x, std::int64_t n) const {
  const std::int64_t B = x.size(0), T = x.size(1), H = options.n_heads(), D = options.d_model() / H;
  // (B, T, n·C) -> (B, T, n, H, D) -> (n, B, H, T, D); each part a view, no copy yet
  const Tensor parts = permute(x.reshape({B, T, n, H, D}), {2, 0, 3, 1, 4});
  TensorList out;
  for (std::int64_t i = 0; i < n; ++i) out.push_back(squeeze(narrow(parts, 0, i, 1), 0));
  return out;
}

Tensor MultiHeadAttention::attend(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& key_padding_mask,
                                  bool causal) {
  AttentionOptions a;
  a.causal = causal;
  a.key_padding_mask = key_padding_mask;
  a.dropout_p = options.attn_dropout();
  a.training = is_training();
  const Tensor heads = scaled_dot_product_attention(q, k, v, a);  // (B, H, Tq, D)
  const std::int64_t B = heads.size(0), Tq = heads.size(2);
  // (B, H, Tq, D) -> (B, Tq, H, D) -> (B, Tq, C)
  const Tensor merged = heads.transpose(1, 2).reshape({B, Tq, options.d_model()});
  return resid_drop->forward(out_proj->forward(merged));
}

namespace {
void check_input(const Tensor& x, std::int64_t C, const char* what) {
  if (x.dim() != 3 || x.size(2) != C)
    throw ShapeError(std::string("MultiHeadAttention: ") + what + " must be (B, T, " + std::to_string(C) +
                     "), got " + shape_str(x.shape()));
}
}  // namespace

Tensor MultiHeadAttention::forward(const Tensor& input, const Tensor& padding_mask) {
  Tensor x = input, key_padding_mask = padding_mask;
  ForwardCall call(*this, {&x, &key_padding_mask});
  if (options.cross()) throw ValueError("MultiHeadAttention: this module does cross-attention; call forward_cross");
  check_input(x, options.d_model(), "x");
  // The fused op reads the heads in place from qkv's output and writes them merged.
  AttentionOptions a;
  a.causal = options.causal();
  a.key_padding_mask = key_padding_mask;
  a.dropout_p = options.attn_dropout();
  a.training = is_training();
  const Tensor merged = self_attention_packed(qkv->forward(x), options.n_heads(), a);  // (B, T, C)
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
  const Tensor q = split_heads(q_proj->forward(x), 1)[0];
  const TensorList kv = split_heads(kv_proj->forward(memory), 2);
  return call.output(attend(q, kv[0], kv[1], memory_padding_mask, false));
}

std::string MultiHeadAttention::extra_repr() const {
  return "d_model=" + std::to_string(options.d_model()) + ", n_heads=" + std::to_string(options.n_heads()) +
         (options.causal() ? ", causal" : "") + (options.cross() ? ", cross" : "");
}

}  // namespace tapegrad::nn
