// stream_recorder.cpp — StreamRecorder: the stream after the embedding and after every block.
#include "stream_recorder.hpp"

#include <string>

#include "../../autograd/errors.hpp"

namespace tapegrad::nn {

StreamRecorder::StreamRecorder(TransformerLM& model) : n_blocks_(model.blocks->size()) {
  if (n_blocks_ == 0) throw ValueError("StreamRecorder: the model has no block, so no stream to record");
  hook_ = model.stream->register_stream_hook(
      [this](std::int64_t l, const Tensor& x) {
        if (l == 0) streams_.clear();  // a new forward: the last one's streams go
        streams_.push_back(x);
      },
      "StreamRecorder");
}

StreamRecorder::~StreamRecorder() { hook_.remove(); }

std::vector<Tensor> StreamRecorder::streams() const {
  if (streams_.size() != n_blocks_ + 1)
    throw ValueError("StreamRecorder: the last forward passed " + std::to_string(streams_.empty() ? 0 : streams_.size() - 1) +
                     " of " + std::to_string(n_blocks_) + " blocks" + (streams_.empty() ? " (no forward yet)" : ""));
  return streams_;
}

}  // namespace tapegrad::nn
