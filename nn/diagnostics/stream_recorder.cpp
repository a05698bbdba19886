// stream_recorder.cpp — StreamRecorder: the first block's input, then every block's output.
#include "stream_recorder.hpp"

#include <string>

#include "../../autograd/errors.hpp"

namespace tapegrad::nn {

StreamRecorder::StreamRecorder(const ModuleList& blocks) : n_blocks_(blocks.size()), outputs_(blocks) {
  if (blocks.size() == 0) throw ValueError("StreamRecorder: the model has no block, so no stream to record");
  // A forward starts at the first block: what it reads is h_0, and the outputs of an earlier
  // forward go.
  first_ = blocks[0]->register_forward_pre_hook(
      [this](Module&, TensorList& inputs) {
        input_ = inputs[0];
        outputs_.clear();
      },
      "StreamRecorder");
}

StreamRecorder::~StreamRecorder() { first_.remove(); }

std::vector<Tensor> StreamRecorder::streams() const {
  if (!input_.defined() || outputs_.outputs().size() != n_blocks_)
    throw ValueError("StreamRecorder: the last forward passed " + std::to_string(outputs_.outputs().size()) + " of " +
                     std::to_string(n_blocks_) + " blocks" + (input_.defined() ? "" : " (no forward yet)"));
  std::vector<Tensor> out{input_};
  out.insert(out.end(), outputs_.outputs().begin(), outputs_.outputs().end());
  return out;
}

}  // namespace tapegrad::nn
