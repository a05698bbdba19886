// logit_lens.hpp — the logit lens (nostalgebraist 2020, "interpreting GPT: the logit lens"):
// decode the residual stream after every block as if it were the last, through the model's
// own readout, and score every depth against the targets:
//   logits_l = readout(h_l),   loss_l = CE(logits_l, targets),   l = 0 (embeddings), 1..L
// loss_L is the model's own loss; where loss_l falls says at which depth the prediction forms.
// top1_agreement_l is the share of tokens whose argmax of logits_l is that of logits_L.
//
// The readout of a TransformerLM (lm_readout) is its own last step: final_norm, then the LM
// head (lm_head, or the tied embedding: logits = h·Eᵀ). Placements that end the stack with a
// norm (Pre-LN and most others) have a final_norm; Post-LN has none: every Post-LN block ends
// with its norm N2, so its stream is decoded as it is. A Readout is any function of the stream,
// so that the lens can be pointed at another readout (a tuned lens, a model whose stream is
// more than one tensor) without changing the sums.
#pragma once

#include <cmath>
#include <cstdint>
#include <functional>
#include <vector>

#include "../transformer_lm.hpp"

namespace tapegrad::nn {

// stream (B, T, C) -> logits (B, T, V).
using Readout = std::function<Tensor(const Tensor& stream)>;

// lm's own readout: final_norm when it has one, then lm_head or the tied embedding. classes:
// int64 (B), the condition of a conditional model (its final norm may be AdaLN); ValueError
// when the model is conditional and classes is undefined. The returned function refers to lm.
Readout lm_readout(TransformerLM& lm, const Tensor& classes = Tensor());

struct LensLayer {
  std::int64_t layer = 0;       // 0: the embeddings; l: the stream after block l
  double loss = NAN;            // mean cross-entropy per counted token, nats
  double top1_agreement = NAN;  // share of counted tokens with argmax logits_l = argmax logits_L
};

// The lens summed over batches, as training::evaluate_lm sums a validation loss: loss sums over
// every counted token, divided once at the end (so loss_L is the evaluation's loss, bit for bit).
class LogitLens {
 public:
  // streams: [0..L] (B, T, C) of one forward (StreamRecorder::streams()); targets: int64 (B, T).
  // A target equal to ignore_index is not counted, as in cross_entropy. ShapeError naming the
  // shapes when a layer's logits are not (B, T, V) of the targets' (B, T); ValueError when
  // streams is empty or holds another count of layers than the batches before.
  void add(const std::vector<Tensor>& streams, const Readout& readout, const Tensor& targets,
           std::int64_t ignore_index = -100);
  // One entry per layer, 0..L; empty before add.
  std::vector<LensLayer> layers() const;
  double tokens() const { return tokens_; }

 private:
  std::vector<double> loss_sum_, agree_;  // [l], summed over the counted tokens
  double tokens_ = 0;
};

// The lens of one batch: runs lm.forward(tokens, classes) in eval mode without recording, a
// StreamRecorder on its stream, and decodes every layer with lm_readout (the mode is restored).
// targets: int64 (B, T). ValueError when the model has no block.
std::vector<LensLayer> logit_lens(TransformerLM& lm, const Tensor& tokens, const Tensor& targets,
                                  const Tensor& classes = Tensor());

}  // namespace tapegrad::nn
