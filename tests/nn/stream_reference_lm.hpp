// stream_reference_lm.hpp — the 2-layer LM of the stream schemes' and placements' PyTorch
// references (tests/reference/make_stream_reference.py, make_hc_reference.py,
// make_attnres_reference.py, make_gpas_reference.py): make_nn_reference's LM (d_model 8, 2 heads,
// d_ff 16, exact GELU, tied head), Pre-LN with LayerNorm unless the case names another placement,
// under a stream config, from a case's parameters; its loss on the case's batch; and the check of
// its logits, loss and every gradient against the case. Header-only.
#pragma once

#include <memory>
#include <string>

#include <catch2/catch.hpp>
#include <tapegrad/tapegrad.hpp>

#include "support/reference.hpp"

namespace tapegrad::testing {

inline constexpr std::int64_t kStreamReferenceVocab = 11;

// The model of case `prefix` (as "denseformer."), its parameters <prefix>param.<name>; its blocks
// under `placement` (make_gpas_reference.py's GPAS on Pre-LN).
inline std::shared_ptr<nn::TransformerLM> reference_stream_lm(const nn::StreamConfig& stream, const ReferenceFile& ref,
                                                               const std::string& prefix,
                                                               const nn::Placement& placement = nn::Placement::pre) {
  nn::TransformerLMConfig c;
  c.vocab_size = kStreamReferenceVocab;
  c.max_seq_len = 8;
  c.n_layers = 2;
  c.tie_weights = true;
  c.block = {.d_model = 8, .n_heads = 2, .d_ff = 16, .activation = nn::Activation::gelu,
             .placement = placement, .dtype = DType::float64};
  c.stream = stream;
  auto lm = std::make_shared<nn::TransformerLM>(c);
  load_reference_parameters(*lm, ref, prefix + "param.", DType::float64);
  return lm;
}

// The cross-entropy of the case's <prefix>tokens against its <prefix>targets.
inline Tensor reference_stream_loss(nn::TransformerLM& lm, const ReferenceFile& ref, const std::string& prefix) {
  const Tensor tokens = ref.get(prefix + "tokens"), targets = ref.get(prefix + "targets");
  return cross_entropy(lm.forward(tokens).reshape({tokens.numel(), kStreamReferenceVocab}),
                       targets.reshape({targets.numel()}));
}

// The logits, the loss and every parameter's gradient against the case within tol; returns how
// many of the parameters are the stream's.
inline std::size_t check_stream_reference(nn::TransformerLM& lm, const ReferenceFile& ref, const std::string& prefix,
                                          double tol) {
  CHECK_CLOSE("logits", lm.forward(ref.get(prefix + "tokens")), ref.get(prefix + "logits"), tol, 0.0);
  const Tensor loss = reference_stream_loss(lm, ref, prefix);
  CHECK_CLOSE("loss", loss, ref.get(prefix + "loss"), tol, 0.0);
  loss.backward();
  std::size_t stream_params = 0;
  for (const auto& [name, p] : lm.named_parameters()) {
    CHECK_CLOSE("grad " + name, p.grad(), ref.get(prefix + "grad." + name), tol, 0.0);
    if (name.rfind("stream.", 0) == 0) ++stream_params;
  }
  return stream_params;
}

}  // namespace tapegrad::testing
