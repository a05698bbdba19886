// head_writes.cpp — HeadWriteRecorder: a pre-hook on each attention's output projection.
#include "head_writes.hpp"

#include "../../autograd/errors.hpp"
#include "../../autograd/grad_mode.hpp"
#include "../../autograd/ops.hpp"
#include "../attention.hpp"
#include "measures.hpp"

namespace tapegrad::nn {

std::vector<Tensor> head_writes(const Tensor& z, const Tensor& out_weight, std::int64_t n_heads) {
  const std::int64_t width = z.dim() > 0 ? z.size(-1) : 0;
  if (n_heads <= 0 || out_weight.dim() != 2 || width != out_weight.size(1) || width % n_heads != 0)
    throw ShapeError("head_writes: z (..., H·D) and W_O (C, H·D) must share H·D, a multiple of H = " +
                     std::to_string(n_heads) + "; got z " + shape_str(z.shape()) + " and W_O " +
                     shape_str(out_weight.shape()));
  const std::int64_t D = width / n_heads, last = z.dim() - 1;
  std::vector<Tensor> out;
  for (std::int64_t h = 0; h < n_heads; ++h) {
    const Tensor z_h = narrow(z, last, h * D, D);        // (B, T, D)
    const Tensor w_h = narrow(out_weight, 1, h * D, D);  // W_O^h: (C, D)
    out.push_back(linear(z_h, w_h));                     // z_h·W_O^hᵀ: (B, T, C)
  }
  return out;
}

HeadWriteRecorder::HeadWriteRecorder(Module& root) {
  for (auto& [_, m] : root.named_modules()) {
    auto* attn = dynamic_cast<MultiHeadAttention*>(m.get());
    if (!attn) continue;
    writes_.push_back(std::make_unique<HeadWrites>());
    HeadWrites* w = writes_.back().get();
    w->path = attn->path();
    const std::int64_t H = attn->options.n_heads();
    handles_.push_back(attn->out_proj->register_forward_pre_hook(
        [w, H](Module& out_proj, TensorList& inputs) {
          NoGradGuard no_grad;  // observe only: nothing joins the model's graph
          const Tensor& W_O = static_cast<Linear&>(out_proj).weight;  // (C, H·D)
          w->norms.clear();
          for (const Tensor& write : head_writes(inputs[0], W_O, H)) w->norms.push_back(l2_norm(write));
        },
        "HeadWriteRecorder"));
  }
}

HeadWriteRecorder::~HeadWriteRecorder() {
  for (HookHandle& h : handles_) h.remove();
}

std::vector<HeadWrites> HeadWriteRecorder::writes() const {
  std::vector<HeadWrites> out;
  for (const auto& w : writes_) out.push_back(*w);
  return out;
}

}  // namespace tapegrad::nn
