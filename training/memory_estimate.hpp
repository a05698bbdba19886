// memory_estimate.hpp — how much memory a training run of a TransformerLM needs, from its
// config alone (nothing is allocated: it runs before the model is built, so a run that cannot
// fit is refused at once instead of growing until the machine swaps).
//
//   training::MemoryPlan plan;  plan.rows = 16;  plan.checkpoint_activations = true;
//   const training::MemoryEstimate e = training::estimate_memory(config, plan);
//   std::puts(training::format_memory_estimate(e, training::available_memory_bytes()).c_str());
//   // memory estimate: parameters 3.25 MB, gradients 3.25 MB, optimizer state 6.5 MB (AdamW: 2 moments),
//   //   activations 17.3 MB (checkpointed; 35.5 MB without), total 30.3 MB (40.1 MB while saving a
//   //   checkpoint) of 23.4 GB available
//
// Bytes, with b the bytes of the model's dtype and P its distinct parameters:
//   parameters = P·b;  gradients = P·b;  optimizer state = m·P·b / shards   (AdamW: m = 2)
//   activations = N·b·(L·a_block + max(a_head, a_ffn))   without checkpointing
//               = N·b·(L·C + max(a_head, a_block + a_back))   with it
// for N = rows·T tokens of one micro-batch (what one forward and backward hold), L blocks and
// per token, in elements (C = d_model, F = FFN width, W = C + 2·Hkv·D the packed q|k|v
// width, H heads, s = 2 LayerNorm statistics per norm (mean, 1/σ), 1 for RMSNorm, C for DyT's
// tanh(α·x), 2C for Derf's α·x + s and its erf):
//   a_block = (5 − 2r)C + W + f·F + H + 2s + (dropout > 0 ? 2C : 0)
//     5C: the block's input, both norms' outputs, the merged heads, the stream between the
//         sublayers (each kept by the op that reads it: a norm or a Linear keeps its input);
//         r = 1 when the Linears keep the norms' outputs as recipes and make them again in
//         the backward (saved_tensor.hpp; plain norms, is_recompute_enabled()), else 0;
//     W: q|k|v, kept by the fused attention with H logsumexps (never the T×T probabilities);
//     f·F: GELU f = 1 (fc1's output, kept by the fused gelu_mlp, which recomputes GELU's in
//         its backward); another elementwise activation f = 2 (fc1's output kept by the
//         activation, the activation's by fc2); SwiGLU f = 4 (fc1's and fc_gate's outputs,
//         SiLU's, their product kept by fc2);
//     2C: the two dropout masks (0 or 1/(1−p), the activations' dtype).
//   a_head = 2C + s + V + 1: the last block's output and the final norm's, the logits kept by
//         the cross-entropy with a logsumexp per row (the peak of the step, when V is large);
//         its backward writes their gradient over them, since a training step keeps no
//         logits of its own (autograd/ops/loss.cpp).
//   a_ffn = F + (2 + r)C with GELU, else 0: the fused GELU's backward (gelu_mlp) holds dh
//         (then du; GELU's recomputed output goes over fc1's) while every block's activations
//         are still kept, with the stream's gradient, dx and the norm's output made again;
//         the peak when the head's is smaller.
//   a_back = f'·F + W + (2 + r)C, f' = 2 (SwiGLU 4): what one block's backward writes
//         before it frees what it kept (the gradients of the FFN's hidden tensors and of
//         q|k|v, the stream's gradient and the residual's, a norm's output made again), on top
//         of the recomputed block with checkpointing.
// With checkpointing a block keeps only its input; the backward recomputes one block at a
// time, so the peak is the inputs of all blocks plus the larger of the head and one block.
// A checkpoint save holds the parameters, gradients and optimizer state, the file being
// written (P·b + optimizer state) and the activations' blocks that the allocator keeps for
// the next step (at most its cache limit, storage.hpp): while_saving, often the larger.
// Not counted: the data and tokenizer, the growth slack of the file's buffer, temporaries
// inside one op. tests/training/test_memory_estimate.cpp
// compares the estimate with the measured peak.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>

#include "../autograd/saved_tensor.hpp"
#include "../nn/transformer_lm.hpp"

namespace tapegrad::training {

struct MemoryPlan {
  std::int64_t rows = 1;      // sequences in one forward and backward of this process (B / processes / grad_accum)
  std::int64_t seq_len = 0;   // tokens per sequence; 0: config.max_seq_len
  bool checkpoint_activations = false;
  bool dropout_active = true;          // training mode: dropout > 0 keeps its masks
  double optimizer_moments = 2;        // tensors of optimizer state per parameter (AdamW: 2)
  std::string optimizer_name = "AdamW";
  std::int64_t optimizer_shards = 1;   // ZeRO-1: each of the processes holds 1/shards of the state
  double allocator_cache = 2.0 * (1 << 30);  // bytes of freed blocks the allocator may keep (cache_limit())
  bool recompute_norm_outputs = is_recompute_enabled();  // the norms' outputs made again in the backward
};

struct MemoryEstimate {
  std::int64_t parameter_count = 0;                     // distinct parameters (a tied head counts once)
  double parameters = 0, gradients = 0, optimizer_state = 0;  // bytes
  double activations = 0;                               // bytes, for the plan's checkpointing setting
  double activations_plain = 0, activations_checkpointed = 0;  // bytes, without and with checkpointing
  bool checkpointed = false;
  double optimizer_moments = 2;
  std::string optimizer_name;
  // Saving a checkpoint builds the file in memory (the parameters and the whole optimizer
  // state, gathered on rank 0 under ZeRO-1) while the gradients live on and the allocator
  // still caches the step's freed activations (up to its limit).
  double checkpoint_file = 0;  // bytes
  double while_saving = 0;     // parameters + gradients + optimizer state + cached activations + file
  double total() const { return parameters + gradients + optimizer_state + activations; }
  // What the run needs at its peak: a step or a checkpoint save.
  double peak() const { return std::max(total(), while_saving); }
};

// The distinct parameters of TransformerLM(config), counted from the config (equal to
// num_parameters() for unconditional models; a conditional model's norms are not counted).
std::int64_t count_parameters(const nn::TransformerLMConfig& config);

MemoryEstimate estimate_memory(const nn::TransformerLMConfig& config, const MemoryPlan& plan);

// "memory estimate: parameters 1.2 GB, gradients 1.2 GB, optimizer state 2.4 GB (AdamW: 2
// moments), activations 4.8 GB (checkpointed; 16.9 GB without), total 9.6 GB (10.4 GB while
// saving a checkpoint) of 23.4 GB available"; available_bytes <= 0 leaves out the last part.
std::string format_memory_estimate(const MemoryEstimate& e, double available_bytes);

// "812 B", "3.4 kB", "1.2 MB", "9.80 GB" (decimal units, three significant digits).
std::string format_bytes(double bytes);

}  // namespace tapegrad::training
