// stream_recorder.hpp — the residual stream at every depth of one forward of a language model:
//   h_0 = what the first block reads (the embeddings, tok_emb + pos_emb)
//   h_l = the stream after block l, l = 1..L: what block l + 1 (or the final norm) reads
// kept by the model's stream hooks (nn/stream/stream.hpp), so that no model's code is touched.
// Under the plain stream h_l is block l's output; under DenseFormer it is the depth-weighted
// average after block l, which is what the next block reads. The logit lens (logit_lens.hpp)
// decodes each h_l.
#pragma once

#include <vector>

#include "../transformer_lm.hpp"

namespace tapegrad::nn {

class StreamRecorder {
 public:
  // ValueError when the model has no block: there is no stream to record.
  explicit StreamRecorder(TransformerLM& model);
  ~StreamRecorder();
  StreamRecorder(const StreamRecorder&) = delete;
  StreamRecorder& operator=(const StreamRecorder&) = delete;
  // [0] = h_0, [l] = h_l of the last forward (L + 1 tensors; a new forward replaces them).
  // ValueError naming the counts when the last forward has not passed every block.
  std::vector<Tensor> streams() const;

 private:
  std::size_t n_blocks_;
  std::vector<Tensor> streams_;
  HookHandle hook_;
};

}  // namespace tapegrad::nn
