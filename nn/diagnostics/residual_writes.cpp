// residual_writes.cpp — WriteRatioRecorder: hooks on each block's sublayers and their norms.
#include "residual_writes.hpp"

#include <cmath>

#include "../transformer_block.hpp"
#include "measures.hpp"

namespace tapegrad::nn {

WriteRatioRecorder::WriteRatioRecorder(Module& root) {
  for (auto& [_, m] : root.named_modules()) {
    auto* block = dynamic_cast<TransformerBlock*>(m.get());  // the blocks of any model, found by type
    if (!block) continue;
    std::vector<Sublayer*> mine;
    auto watch = [&](Module* sublayer, const std::shared_ptr<Residual>& residual, const char* name) {
      if (!sublayer) return;
      sublayers_.push_back(std::make_unique<Sublayer>());
      Sublayer* s = sublayers_.back().get();
      s->write.path = residual->path();
      s->write.block = block->path();
      s->write.sublayer = name;
      mine.push_back(s);
      auto first_input = [s](Module&, TensorList& inputs) {
        if (s->seen_input) return;
        s->seen_input = true;
        s->input = inputs[0];
        s->write.input_norm = l2_norm(s->input);
      };
      if (residual->norm) handles_.push_back(residual->norm->register_forward_pre_hook(first_input, "WriteRatioRecorder"));
      handles_.push_back(sublayer->register_forward_pre_hook(first_input, "WriteRatioRecorder"));
      handles_.push_back(sublayer->register_forward_hook(
          [s](Module&, const TensorList&, Tensor& out) {
            // Only the output of the forward whose input was noted: the backward of a
            // checkpointed block runs its sublayers again (TransformerBlock::compute, no block
            // hooks), on the same inputs, and leaves the values of the forward as they are.
            if (!s->input.defined()) return;
            ResidualWrite& w = s->write;
            w.output_norm = l2_norm(out);
            w.ratio = w.input_norm > 0 ? w.output_norm / w.input_norm : NAN;
            w.read_write_cosine = mean_token_cosine(s->input, out, "WriteRatioRecorder");
            s->input = Tensor();  // not kept past the forward
          },
          "WriteRatioRecorder"));
    };
    watch(block->attn.get(), block->attn_residual, "attn");
    watch(block->cross_attn.get(), block->cross_residual, "cross_attn");
    watch(block->ffn.get(), block->ffn_residual, "ffn");
    // a new forward of the block: every sublayer waits for its first input again
    handles_.push_back(block->register_forward_pre_hook(
        [mine](Module&, TensorList&) {
          for (Sublayer* s : mine) s->seen_input = false;
        },
        "WriteRatioRecorder"));
  }
}

WriteRatioRecorder::~WriteRatioRecorder() {
  for (HookHandle& h : handles_) h.remove();
}

std::vector<ResidualWrite> WriteRatioRecorder::writes() const {
  std::vector<ResidualWrite> out;
  for (const auto& s : sublayers_) out.push_back(s->write);
  return out;
}

}  // namespace tapegrad::nn
