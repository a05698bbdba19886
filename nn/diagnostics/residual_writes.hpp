// residual_writes.hpp — how much each sublayer writes into the residual stream. In Elhage et
// al.'s residual-stream view (2021, "A Mathematical Framework for Transformer Circuits") every
// attention and FFN sublayer reads the stream x and adds its output F to it; ‖F‖/‖x‖ says how
// loud that write is against what is already there.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "../module.hpp"

namespace tapegrad::nn {

struct ResidualWrite {
  std::string path;    // e.g. "blocks.2.ffn_residual"
  double ratio = 0;    // ‖F‖ / ‖x‖ of the last forward
};

// How much each sublayer of each TransformerBlock under root writes into the residual
// stream, ‖F‖/‖x‖ (L2 over the whole batch) of the last forward: x is the stream entering the
// sublayer (what its formula hands first to the sublayer's norm, as Pre-LN's F(N(x)), or to
// the sublayer itself, as Post-LN's N(x + F(x))), F the sublayer's output (before AdaLN-Zero's
// gate). Made of forward hooks only, as any user could write them: pre-hooks on each
// sublayer's norm and module note the first input of a forward, a forward hook the output.
class WriteRatioRecorder {
 public:
  explicit WriteRatioRecorder(Module& root);
  ~WriteRatioRecorder();
  WriteRatioRecorder(const WriteRatioRecorder&) = delete;
  WriteRatioRecorder& operator=(const WriteRatioRecorder&) = delete;
  std::vector<ResidualWrite> ratios() const;

 private:
  struct Sublayer {
    std::string path;
    double input_norm = 0, output_norm = 0;
    bool seen_input = false;
  };
  std::vector<std::unique_ptr<Sublayer>> sublayers_;
  std::vector<HookHandle> handles_;
};

}  // namespace tapegrad::nn
