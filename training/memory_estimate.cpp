// memory_estimate.cpp — the parameter count and the memory of a training step, from the
// config (memory_estimate.hpp has the formulas).
#include "memory_estimate.hpp"

#include <algorithm>
#include <cctype>
#include <cstdio>

#include "../nn/feed_forward.hpp"
#include "../nn/summary.hpp"

namespace tapegrad::training {

namespace {

// Whether FeedForward runs as the fused gelu_mlp (for a model without hooks on fc1 and fc2,
// outside anomaly mode, which is what training runs).
bool fused_gelu(nn::Activation a) { return nn::FeedForward::fuses(a); }

// The FFN's hidden tensors kept for the backward: the fused GELU keeps fc1's output alone;
// another elementwise activation keeps fc1's output and its own (fc2's input); SwiGLU four.
double ffn_kept(nn::Activation a) {
  if (a == nn::Activation::swiglu) return 4;
  return fused_gelu(a) ? 1 : 2;
}

// The FFN's hidden tensors a block's backward writes before it frees what it kept: the
// composed ops' gradients of fc1's and the activation's outputs (SwiGLU: 4); the fused GELU
// recomputes GELU's output over fc1's (a training step does not retain the graph) and holds
// dh (then du, in place).
double ffn_written(nn::Activation a) {
  if (a == nn::Activation::swiglu) return 4;
  return 2;
}

// A norm's parameters: its gain g; LayerNorm's, DyT's and Derf's bias b; DyT's α, Derf's α and s.
std::int64_t norm_parameters(const nn::NormKind& n, std::int64_t C) {
  if (n == nn::NormKind::dyt) return 2 * C + 1;
  if (n == nn::NormKind::derf) return 2 * C + 2;
  return n == nn::NormKind::layernorm ? 2 * C : C;
}

// s: what a norm keeps per token for its backward besides its input: LayerNorm's mean and 1/σ,
// RMSNorm's 1/rms; DyT's tanh(α·x), kept by the product with g (C); Derf's α·x + s, kept by
// erf, and erf's output, kept by the product with g (2C).
double norm_kept(const nn::NormKind& n, double C) {
  if (n == nn::NormKind::dyt) return C;
  if (n == nn::NormKind::derf) return 2 * C;
  return n == nn::NormKind::layernorm ? 2 : 1;
}

// The sizes the formulas use, from the block config as TransformerLM builds it.
struct Dims {
  double C, F, W, H, V, T, L, s;
  double f_kept, f_back;  // FFN hidden tensors (of F) kept for the backward, and written by it
  bool fused_gelu;
  double r;  // 1 when the norms' outputs are made again in the backward (saved_tensor.hpp), else 0
};

Dims dims_of(const nn::TransformerLMConfig& config, std::int64_t seq_len, bool recompute) {
  const nn::TransformerBlockConfig b = config.block_config();
  const std::int64_t kv_heads = b.n_kv_heads > 0 ? b.n_kv_heads : b.n_heads, D = b.d_model / b.n_heads;
  const bool layernorm = b.norm == nn::NormKind::layernorm;
  // A plain norm's output feeds a Linear (q|k|v, fc1), which keeps its recipe; AdaLN's is
  // modulated first, and the multiplication keeps it.
  const bool made_again = recompute && nn::placement_info(b.placement).norms &&
                          (layernorm || b.norm == nn::NormKind::rmsnorm);
  return {double(b.d_model), double(b.ff_dim()), double(b.d_model + 2 * kv_heads * D), double(b.n_heads),
          double(config.vocab_size), double(seq_len > 0 ? seq_len : config.max_seq_len), double(config.n_layers),
          norm_kept(b.norm, double(b.d_model)), ffn_kept(b.activation), ffn_written(b.activation),
          fused_gelu(b.activation), made_again ? 1.0 : 0.0};
}

}  // namespace

std::int64_t count_parameters(const nn::TransformerLMConfig& config) {
  const nn::TransformerBlockConfig b = config.block_config();
  const nn::PlacementInfo& p = nn::placement_info(b.placement);
  const std::int64_t C = b.d_model, F = b.ff_dim(), V = config.vocab_size;
  const std::int64_t W = C + 2 * (b.n_kv_heads > 0 ? b.n_kv_heads : b.n_heads) * (C / b.n_heads);
  const std::int64_t bias = b.bias ? 1 : 0;
  auto linear = [&](std::int64_t in, std::int64_t out) { return in * out + bias * out; };
  const std::int64_t norm = norm_parameters(b.norm, C);
  std::int64_t block = linear(C, W) + linear(C, C) + linear(C, F) + linear(F, C);
  if (b.activation == nn::Activation::swiglu) block += linear(C, F);  // fc_gate
  if (p.norms) block += (p.output_norms ? 4 : 2) * norm;
  if (p.rezero_gates) block += 2;
  if (p.hypersphere) block += 3 * C + 2 * F;  // nGPT: α_A, α_M, s_qk (C each); s_u, s_v (F each)
  std::int64_t n = V * C + config.n_layers * block;  // token embedding (the tied head) and the blocks
  if (!b.rope) n += config.max_seq_len * C;          // learned positions
  if (p.final_norm) n += norm;
  if (!config.tie_weights) n += V * C;  // lm_head
  if (p.hypersphere) n += V;            // nGPT's s_z
  return n;
}

MemoryEstimate estimate_memory(const nn::TransformerLMConfig& config, const MemoryPlan& plan) {
  const Dims d = dims_of(config, plan.seq_len, plan.recompute_norm_outputs);
  const double b = double(size_of(config.block.dtype));
  MemoryEstimate e;
  e.parameter_count = count_parameters(config);
  e.parameters = double(e.parameter_count) * b;
  e.gradients = e.parameters;
  e.optimizer_state = plan.optimizer_moments * e.parameters / double(std::max<std::int64_t>(plan.optimizer_shards, 1));
  e.optimizer_moments = plan.optimizer_moments;
  e.optimizer_name = plan.optimizer_name;
  // Per token, in elements (memory_estimate.hpp explains each term).
  const bool dropout = plan.dropout_active && config.block.dropout > 0;
  const double a_block = (5 - 2 * d.r) * d.C + d.W + d.f_kept * d.F + d.H + 2 * d.s + (dropout ? 2 * d.C : 0);
  const double a_head = 2 * d.C + d.s + d.V + 1;
  const double a_back = d.f_back * d.F + d.W + (2 + d.r) * d.C;
  const double a_ffn = d.fused_gelu ? d.F + (2 + d.r) * d.C : 0;  // the fused GELU's backward at its peak
  const double tokens = double(plan.rows) * d.T;
  e.activations_plain = tokens * b * (d.L * a_block + std::max(a_head, a_ffn));
  e.activations_checkpointed = tokens * b * (d.L * d.C + std::max(a_head, a_block + a_back));
  e.checkpointed = plan.checkpoint_activations;
  e.activations = e.checkpointed ? e.activations_checkpointed : e.activations_plain;
  e.checkpoint_file = e.parameters + plan.optimizer_moments * e.parameters;  // ZeRO-1 too: gathered on rank 0
  e.while_saving = e.parameters + e.gradients + e.optimizer_state + std::min(e.activations, plan.allocator_cache) +
                   e.checkpoint_file;
  return e;
}

std::string format_bytes(double bytes) {
  std::string n = nn::short_count(bytes);  // "812", "3.4k", "1.23G"
  if (!n.empty() && std::isalpha(static_cast<unsigned char>(n.back()))) n.insert(n.size() - 1, " ");
  else n += " ";
  return n + "B";
}

std::string format_memory_estimate(const MemoryEstimate& e, double available_bytes) {
  char moments[64];
  std::snprintf(moments, sizeof moments, "%s: %g moment%s", e.optimizer_name.c_str(), e.optimizer_moments,
                e.optimizer_moments == 1 ? "" : "s");
  std::string text = "memory estimate: parameters " + format_bytes(e.parameters) + ", gradients " +
                     format_bytes(e.gradients) + ", optimizer state " + format_bytes(e.optimizer_state) + " (" +
                     moments + "), activations " + format_bytes(e.activations) +
                     (e.checkpointed ? " (checkpointed; " + format_bytes(e.activations_plain) + " without)"
                                     : " (" + format_bytes(e.activations_checkpointed) + " with checkpointing)") +
                     ", total " + format_bytes(e.total());
  if (e.while_saving > e.total()) text += " (" + format_bytes(e.while_saving) + " while saving a checkpoint)";
  if (available_bytes > 0) text += " of " + format_bytes(available_bytes) + " available";
  return text;
}

}  // namespace tapegrad::training
