// ngpt.cpp — unit_norm and the renormalization of nGPT's matrices.
#include "ngpt.hpp"

#include "../autograd/grad_mode.hpp"
#include "../autograd/ops.hpp"
#include "attention.hpp"
#include "embedding.hpp"
#include "feed_forward.hpp"
#include "transformer_lm.hpp"

namespace tapegrad::nn {

Tensor unit_norm(const Tensor& x) {
  return div(x, sqrt(sum(mul(x, x), {-1}, true)));  // x / ‖x‖, the norm over the last dim kept as (..., 1)
}

namespace {
// w ← w / ‖w‖ along dim (1: each row, 0: each column), in place.
void normalize_along(Tensor& w, std::int64_t dim) {
  w.copy_(div(w, sqrt(sum(mul(w, w), {dim}, true))));
}
void normalize_rows(const std::shared_ptr<Linear>& l) {
  if (l) normalize_along(l->weight, 1);
}
void normalize_columns(const std::shared_ptr<Linear>& l) {
  if (l) normalize_along(l->weight, 0);
}
}  // namespace

void ngpt_normalize_weights(Module& model) {
  NoGradGuard no_grad;  // an update of the weights, as the optimizer's: nothing to record
  for (const auto& [name, m] : model.named_modules()) {
    if (auto* attn = dynamic_cast<MultiHeadAttention*>(m.get())) {
      normalize_rows(attn->qkv), normalize_rows(attn->q_proj), normalize_rows(attn->kv_proj);
      normalize_columns(attn->out_proj);
    } else if (auto* ffn = dynamic_cast<FeedForward*>(m.get())) {
      normalize_rows(ffn->fc1), normalize_rows(ffn->fc_gate);
      normalize_columns(ffn->fc2);
    } else if (auto* emb = dynamic_cast<Embedding*>(m.get())) {
      normalize_along(emb->weight, 1);  // the tied head too: it is this matrix
    } else if (auto* lm = dynamic_cast<TransformerLM*>(m.get())) {
      normalize_rows(lm->lm_head);  // untied only; its embeddings are visited as an Embedding
    }
  }
}

}  // namespace tapegrad::nn
