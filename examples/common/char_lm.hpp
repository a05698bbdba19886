// char_lm.hpp — the short training runs of the programs that train small character models of
// the default corpus to look at them afterwards (logit_lens, stream_norms): the same optimizer,
// schedule and batches for every model they compare, so that only the design differs.
#pragma once

#include <tapegrad/tapegrad.hpp>

#include <functional>
#include <string>

namespace study {

// `steps` AdamW steps (lr peak `lr`, weight decay 0.1 on the weights, warm-up over a tenth of
// the steps, then cosine to a tenth; gradients clipped at norm 1) of the cross-entropy on B × T
// windows of the training split, drawn from `seed`. setup, when given, runs on the optimizer
// before the first step (nGPT's renormalization hook). Throws std::runtime_error naming `label`
// and the step when an update is refused (a non-finite loss or gradient).
void train_char_lm(tapegrad::nn::TransformerLM& model, const tapegrad::data::TokenStream& stream, std::int64_t steps, double lr,
                   std::uint64_t seed, std::int64_t B, std::int64_t T, const std::string& label,
                   const std::function<void(tapegrad::optim::Optimizer&)>& setup = {});

}  // namespace study
