// logit_lens.cpp — the readout of a TransformerLM and the lens's sums over layers and batches.
#include "logit_lens.hpp"

#include <string>

#include "../../autograd/errors.hpp"
#include "../../autograd/grad_mode.hpp"
#include "../../autograd/ops.hpp"
#include "stream_recorder.hpp"

namespace tapegrad::nn {

Readout lm_readout(TransformerLM& lm, const Tensor& classes) {
  if (lm.cond_emb && !classes.defined())
    throw ValueError("lm_readout: this model is conditional (n_classes = " + std::to_string(lm.config.n_classes) +
                     "): its final norm needs the classes (B) of the batch");
  const Tensor cond = lm.cond_emb ? lm.cond_emb->forward(classes) : Tensor();  // (B, cond_dim)
  // The model's own last lines (TransformerLM::readout), so readout(h_L) is its logits.
  return [&lm, cond](const Tensor& stream) { return lm.readout(stream, cond); };
}

void LogitLens::add(const std::vector<Tensor>& streams, const Readout& readout, const Tensor& targets,
                    std::int64_t ignore_index) {
  if (streams.empty()) throw ValueError("LogitLens::add: no stream to decode");
  if (!loss_sum_.empty() && streams.size() != loss_sum_.size())
    throw ValueError("LogitLens::add: " + std::to_string(streams.size()) + " layers, the batches before had " +
                     std::to_string(loss_sum_.size()));
  loss_sum_.resize(streams.size()), agree_.resize(streams.size());
  NoGradGuard no_grad;
  const std::int64_t n = targets.numel();
  const Tensor flat_targets = targets.reshape({n});
  const std::vector<std::int64_t> target = flat_targets.to_vector<std::int64_t>();
  // The last layer first: every layer's argmax is compared with its.
  std::vector<std::int64_t> last_top1;
  for (std::size_t k = 0; k < streams.size(); ++k) {
    const std::size_t l = streams.size() - 1 - k;
    const Tensor logits = readout(streams[l]);  // (B, T, V)
    if (logits.dim() != 3 || logits.size(0) != targets.size(0) || logits.size(1) != targets.size(1))
      throw ShapeError("LogitLens::add: the readout of layer " + std::to_string(l) + " gave " +
                       shape_str(logits.shape()) + ", expected (B, T, V) for targets " + shape_str(targets.shape()));
    const Tensor flat = logits.reshape({n, logits.size(2)});
    loss_sum_[l] += cross_entropy(flat, flat_targets, Reduction::sum, ignore_index).item();
    const std::vector<std::int64_t> top1 = argmax(flat, 1).to_vector<std::int64_t>();
    if (k == 0) last_top1 = top1;
    for (std::int64_t i = 0; i < n; ++i) agree_[l] += target[i] != ignore_index && top1[i] == last_top1[i];
  }
  for (std::int64_t t : target) tokens_ += t != ignore_index;
}

std::vector<LensLayer> LogitLens::layers() const {
  std::vector<LensLayer> out;
  for (std::size_t l = 0; l < loss_sum_.size(); ++l)
    out.push_back({static_cast<std::int64_t>(l), loss_sum_[l] / tokens_, agree_[l] / tokens_});
  return out;
}

std::vector<LensLayer> logit_lens(TransformerLM& lm, const Tensor& tokens, const Tensor& targets, const Tensor& classes) {
  NoGradGuard no_grad;
  const bool was_training = lm.is_training();
  lm.eval();
  StreamRecorder recorder(lm);
  (void)lm.forward(tokens, classes);
  LogitLens lens;
  lens.add(recorder.streams(), lm_readout(lm, classes), targets);
  lm.train(was_training);
  return lens.layers();
}

}  // namespace tapegrad::nn
