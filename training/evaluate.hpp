// evaluate.hpp — held-out scores, without recording (NoGradGuard) and in eval mode (no
// dropout); the model is put back in training mode afterwards.
//
//   evaluate_lm    mean cross-entropy per token over the first batches of the validation
//                  windows of a token stream (what train_lm and the depth study report)
//   Scores         teacher-forced loss, token accuracy and exact match, summed over batches
//                  of (logits, targets) whose ignored targets (data::kIgnoreIndex) do not count
#pragma once

#include <cstdint>

#include "../data/text_corpus.hpp"
#include "../nn/transformer_lm.hpp"

namespace tapegrad::training {

// Nats per token over the first `batches` windows (B × T each) of stream's validation split;
// NaN when the split has no window.
double evaluate_lm(nn::TransformerLM& model, const data::TokenStream& stream, std::int64_t batches, std::int64_t B,
                   std::int64_t T);

struct Scores {
  double loss_sum = 0, right = 0, tokens = 0, rows = 0, exact_rows = 0;
  // logits (B, T, V) against targets (B, T).
  void add(const Tensor& logits, const Tensor& targets);
  double loss() const { return loss_sum / tokens; }         // cross-entropy per token
  double token_accuracy() const { return right / tokens; }  // share of tokens whose argmax is right
  double exact_match() const { return exact_rows / rows; }  // share of rows with every token right
};

}  // namespace tapegrad::training
