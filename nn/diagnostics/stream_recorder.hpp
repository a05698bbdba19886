// stream_recorder.hpp — the residual stream at every depth of one forward of a block stack:
//   h_0 = what the first block reads (a TransformerLM's embeddings, tok_emb + pos_emb)
//   h_l = block_l(h_{l−1}),  l = 1..L        (the stream after block l)
// kept by hooks on the blocks, a pre-hook on the first and an OutputRecorder on all, so that
// no model's code is touched. The logit lens (logit_lens.hpp) decodes each h_l. The stream is
// one tensor (B, T, C) here; a model whose stream is more (several parallel streams) needs a
// recorder of its own.
#pragma once

#include <vector>

#include "../containers.hpp"
#include "output_recorder.hpp"

namespace tapegrad::nn {

class StreamRecorder {
 public:
  // ValueError when blocks is empty: there is no block to watch the stream through.
  explicit StreamRecorder(const ModuleList& blocks);
  ~StreamRecorder();
  StreamRecorder(const StreamRecorder&) = delete;
  StreamRecorder& operator=(const StreamRecorder&) = delete;
  // [0] = h_0, [l] = h_l of the last forward (L + 1 tensors; a new forward replaces them).
  // ValueError naming the counts when the last forward has not passed every block.
  std::vector<Tensor> streams() const;

 private:
  std::size_t n_blocks_;
  Tensor input_;  // h_0
  OutputRecorder outputs_;
  HookHandle first_;
};

}  // namespace tapegrad::nn
