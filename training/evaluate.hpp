// evaluate.hpp — held-out scores, without recording (NoGradGuard) and in eval mode (no
// dropout); the model is put back in training mode afterwards.
//
//   evaluate_lm    mean cross-entropy per token over the first batches of the validation
//                  windows of a token stream (what train_lm and the depth study report)
//   evaluate_lens  the same, with the logit lens of the same forward passes (train_lm --lens)
//   Scores         teacher-forced loss, token accuracy and exact match, summed over batches
//                  of (logits, targets) whose ignored targets (data::kIgnoreIndex) do not count
#pragma once

#include <cmath>
#include <cstdint>
#include <functional>
#include <vector>

#include "../data/text_corpus.hpp"
#include "../nn/diagnostics/logit_lens.hpp"
#include "../nn/transformer_lm.hpp"

namespace tapegrad::training {

// Nats per token over the first `batches` windows (B × T each) of stream's validation split;
// NaN when the split has no window. each, when given, is called after every batch's forward,
// still without recording and in eval mode: what forward hooks kept of that batch can be read
// there, beside its targets (train_lm --lens decodes the stream a StreamRecorder kept).
double evaluate_lm(nn::TransformerLM& model, const data::TokenStream& stream, std::int64_t batches, std::int64_t B,
                   std::int64_t T, const std::function<void(const data::Batch&)>& each = {});

// evaluate_lm's loss and the logit lens of its batches (nn/diagnostics/logit_lens.hpp): the
// stream after every block, kept by a StreamRecorder, decoded by the model's own readout. The
// lens's last layer is `loss`, bit for bit. ValueError when the model has no block.
struct LensEvaluation {
  double loss = NAN;
  std::vector<nn::LensLayer> layers;  // 0: the embeddings, l: after block l
};
LensEvaluation evaluate_lens(nn::TransformerLM& model, const data::TokenStream& stream, std::int64_t batches,
                             std::int64_t B, std::int64_t T);

struct Scores {
  double loss_sum = 0, right = 0, tokens = 0, rows = 0, exact_rows = 0;
  // logits (B, T, V) against targets (B, T).
  void add(const Tensor& logits, const Tensor& targets);
  double loss() const { return loss_sum / tokens; }         // cross-entropy per token
  double token_accuracy() const { return right / tokens; }  // share of tokens whose argmax is right
  double exact_match() const { return exact_rows / rows; }  // share of rows with every token right
};

}  // namespace tapegrad::training
