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
    auto watch = [&](Module* sublayer, const std::shared_ptr<Residual>& residual) {
      if (!sublayer) return;
      sublayers_.push_back(std::make_unique<Sublayer>());
      Sublayer* s = sublayers_.back().get();
      s->path = residual->path();
      mine.push_back(s);
      auto first_input = [s](Module&, TensorList& inputs) {
        if (s->seen_input) return;
        s->seen_input = true;
        s->input_norm = l2_norm(inputs[0]);
      };
      if (residual->norm) handles_.push_back(residual->norm->register_forward_pre_hook(first_input, "WriteRatioRecorder"));
      handles_.push_back(sublayer->register_forward_pre_hook(first_input, "WriteRatioRecorder"));
      handles_.push_back(sublayer->register_forward_hook(
          [s](Module&, const TensorList&, Tensor& out) { s->output_norm = l2_norm(out); }, "WriteRatioRecorder"));
    };
    watch(block->attn.get(), block->attn_residual);
    watch(block->cross_attn.get(), block->cross_residual);
    watch(block->ffn.get(), block->ffn_residual);
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

std::vector<ResidualWrite> WriteRatioRecorder::ratios() const {
  std::vector<ResidualWrite> out;
  for (const auto& s : sublayers_) out.push_back({s->path, s->input_norm > 0 ? s->output_norm / s->input_norm : NAN});
  return out;
}

}  // namespace tapegrad::nn
