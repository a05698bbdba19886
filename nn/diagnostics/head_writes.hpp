// head_writes.hpp — each attention head's write into the residual stream. Elhage et al. 2021
// ("A Mathematical Framework for Transformer Circuits", §"Attention heads are independent and
// additive") split the output projection W_O (C, C) into one slice per head:
//   Attn(x) = W_O·concat_h(z_h) + b_O = Σ_h W_O^h·z_h + b_O,   W_O^h = W_O[:, h·D:(h+1)·D] (C, D)
// where z_h (B, T, D) is head h's output, softmax(q_h·k_hᵀ/√D + mask)·v_h. Head h writes
// W_O^h·z_h (B, T, C) into the stream; the bias b_O belongs to no head. This records its L2
// norm over the whole batch, ‖W_O^h·z_h‖₂, for every head of every MultiHeadAttention under a
// root, with a forward pre-hook on each out_proj (its input is concat_h(z_h)): the attention's
// own numbers are untouched, and the per-head products are computed beside them, without tape.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "../module.hpp"

namespace tapegrad::nn {

// One attention module's heads in the last forward.
struct HeadWrites {
  std::string path;           // the attention's path, e.g. "blocks.1.attn"
  std::vector<double> norms;  // [h] = ‖W_O^h·z_h‖₂ over (B, T, C); empty before a forward
};

class HeadWriteRecorder {
 public:
  // Every MultiHeadAttention under root (self- and cross-attention, found by type).
  explicit HeadWriteRecorder(Module& root);
  ~HeadWriteRecorder();
  HeadWriteRecorder(const HeadWriteRecorder&) = delete;
  HeadWriteRecorder& operator=(const HeadWriteRecorder&) = delete;
  // One entry per attention module, in the order of the modules under root.
  std::vector<HeadWrites> writes() const;

 private:
  std::vector<std::unique_ptr<HeadWrites>> writes_;
  std::vector<HookHandle> handles_;
};

// Head h's write W_O^h·z_h (B, T, C) for every h: z = concat_h(z_h) (B, T, H·D), the input of
// the output projection, out_weight = W_O (C, H·D). ShapeError naming the shapes when z's last
// dim is not H·D or out_weight's column count. Differentiable (the recorder runs it without tape).
std::vector<Tensor> head_writes(const Tensor& z, const Tensor& out_weight, std::int64_t n_heads);

}  // namespace tapegrad::nn
