// residual_writes.hpp — how much each sublayer writes into the residual stream. In Elhage et
// al.'s residual-stream view (2021, "A Mathematical Framework for Transformer Circuits") every
// attention and FFN sublayer reads the stream x and adds its output F to it; ‖F‖/‖x‖ says how
// loud that write is against what is already there, and cos(x, F) whether it adds to the
// direction the stream already has (> 0), writes across it (≈ 0) or erases it (< 0).
#pragma once

#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "../module.hpp"

namespace tapegrad::nn {

// One sublayer's write in the last forward. Norms are L2 over the whole batch (B, T, C).
struct ResidualWrite {
  std::string path;      // e.g. "blocks.2.ffn_residual"
  std::string block;     // "blocks.2": the block's path
  std::string sublayer;  // "attn", "cross_attn" or "ffn"
  double input_norm = 0;   // ‖x‖: the stream the sublayer reads
  double output_norm = 0;  // ‖F‖: what it writes
  double ratio = NAN;      // ‖F‖ / ‖x‖ (NaN when ‖x‖ = 0, or before a forward)
  double read_write_cosine = NAN;  // (1/N) Σ_tokens cos(x_t, F_t), over the N = B·T tokens
};

// How much each sublayer of each TransformerBlock under root writes into the residual
// stream, ‖F‖/‖x‖ (L2 over the whole batch) of the last forward: x is the stream entering the
// sublayer (what its formula hands first to the sublayer's norm, as Pre-LN's F(N(x)), or to
// the sublayer itself, as Post-LN's N(x + F(x))), F the sublayer's output (before AdaLN-Zero's
// gate). Made of forward hooks only, as any user could write them: pre-hooks on each
// sublayer's norm and module note the first input of a forward, a forward hook the output.
// The input is kept until the output comes, for the cosine; nothing is recorded on the tape.
class WriteRatioRecorder {
 public:
  explicit WriteRatioRecorder(Module& root);
  ~WriteRatioRecorder();
  WriteRatioRecorder(const WriteRatioRecorder&) = delete;
  WriteRatioRecorder& operator=(const WriteRatioRecorder&) = delete;
  // Each sublayer of each block, in the order of the blocks under root.
  std::vector<ResidualWrite> writes() const;
  std::vector<ResidualWrite> ratios() const { return writes(); }  // its first name

 private:
  struct Sublayer {
    ResidualWrite write;
    Tensor input;  // x, from the pre-hook until the forward hook
    bool seen_input = false;
  };
  std::vector<std::unique_ptr<Sublayer>> sublayers_;
  std::vector<HookHandle> handles_;
};

}  // namespace tapegrad::nn
