// evaluate.cpp — held-out scores.
#include "evaluate.hpp"

#include <cmath>

#include "../autograd/grad_mode.hpp"
#include "../autograd/ops.hpp"
#include "../data/synthetic.hpp"
#include "../nn/diagnostics/stream_recorder.hpp"

namespace tapegrad::training {

double evaluate_lm(nn::TransformerLM& model, const data::TokenStream& stream, std::int64_t batches, std::int64_t B,
                   std::int64_t T, const std::function<void(const data::Batch&)>& each) {
  NoGradGuard no_grad;
  const bool was_training = model.is_training();
  model.eval();
  data::Batch batch;
  double total = 0;
  std::int64_t n = 0;
  auto it = stream.windows(data::Split::val, B, T);
  for (std::int64_t b = 0; b < batches && it.next(batch); ++b) {
    const Tensor logits = model.forward(batch.inputs);
    const std::int64_t count = batch.targets.numel();
    total += cross_entropy(logits.reshape({count, -1}), batch.targets.reshape({count}), Reduction::sum).item();
    n += count;
    if (each) each(batch);
  }
  model.train(was_training);
  return n ? total / static_cast<double>(n) : NAN;
}

LensEvaluation evaluate_lens(nn::TransformerLM& model, const data::TokenStream& stream, std::int64_t batches,
                             std::int64_t B, std::int64_t T) {
  nn::StreamRecorder streams(model);
  const nn::Readout readout = nn::lm_readout(model);
  nn::LogitLens lens;
  LensEvaluation out;
  out.loss = evaluate_lm(model, stream, batches, B, T,
                         [&](const data::Batch& batch) { lens.add(streams.streams(), readout, batch.targets); });
  out.layers = lens.layers();
  return out;
}

void Scores::add(const Tensor& logits, const Tensor& targets) {
  const std::int64_t n = targets.numel(), T = targets.size(1);
  loss_sum += cross_entropy(logits.reshape({n, -1}), targets.reshape({n}), Reduction::sum).item();
  const auto predicted = argmax(logits, -1).to_vector<std::int64_t>();
  const auto target = targets.to_vector<std::int64_t>();
  for (std::int64_t row = 0; row < targets.size(0); ++row) {
    bool all_right = true;
    for (std::int64_t k = row * T; k < (row + 1) * T; ++k) {
      if (target[k] == data::kIgnoreIndex) continue;
      right += predicted[k] == target[k];
      all_right = all_right && predicted[k] == target[k];
      tokens += 1;
    }
    rows += 1;
    exact_rows += all_right;
  }
}

}  // namespace tapegrad::training
