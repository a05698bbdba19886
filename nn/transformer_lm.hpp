// transformer_lm.hpp — a decoder-only language model (GPT-style):
//
//   h0 = tok_emb[tokens] + pos_emb[0..T-1]            (B, T, C)
//   h_l = block_l(h_{l-1})  for l = 1..L               causal self-attention + FFN
//   logits = lm_head(final_norm(h_L))                  (B, T, V); final_norm only for pre
//
// The LM head is optionally tied to the token embedding (logits = h·Eᵀ, no extra weight).
// With n_classes > 0 the model is conditional: a class (task) id picks a vector from
// cond_emb that drives every AdaLN / AdaLN-Zero norm.
#pragma once

#include "containers.hpp"
#include "embedding.hpp"
#include "model_init.hpp"
#include <optional>

#include "transformer_block.hpp"

namespace tapegrad::nn {

struct TransformerLMConfig {
  std::int64_t vocab_size = 256;
  std::int64_t max_seq_len = 256;
  std::int64_t n_layers = 4;
  TransformerBlockConfig block;  // block.causal is forced on
  bool tie_weights = true;
  InitScheme init = InitScheme::gpt2;
  // The optional L^(-1/2) scaling of the blocks' Linear weights (model_init.hpp); off unless set.
  std::optional<bool> b2t_scaling;
  std::int64_t n_classes = 0;  // > 0: conditional model (block.norm adaln or adaln_zero)
  void validate() const;
};

struct GenerateOptions {
  double temperature = 1.0;  // 0: greedy (argmax)
  std::int64_t top_k = 0;    // 0: all tokens
  Generator* gen = nullptr;  // default generator when null
};

class TransformerLM : public Module {
 public:
  explicit TransformerLM(const TransformerLMConfig& config);
  // tokens: int64 (B, T) with T <= max_seq_len -> logits (B, T, vocab_size).
  // classes: int64 (B), required when the model is conditional.
  Tensor forward(const Tensor& tokens, const Tensor& classes = Tensor());
  // Appends max_new_tokens sampled tokens to the prompt (B, T) (or (T)); runs in eval mode
  // without recording, restores the training mode afterwards.
  Tensor generate(const Tensor& prompt, std::int64_t max_new_tokens, const GenerateOptions& options = {},
                  const Tensor& classes = Tensor());
  std::string extra_repr() const override;

  TransformerLMConfig config;
  std::shared_ptr<Embedding> tok_emb, pos_emb, cond_emb;
  std::shared_ptr<ModuleList> blocks;
  std::shared_ptr<Module> final_norm;  // pre placement only
  std::shared_ptr<Linear> lm_head;     // untied only

  // When true, forward() keeps each block's output in block_outputs (for diagnostics).
  bool capture_block_outputs = false;
  std::vector<Tensor> block_outputs;
};

}  // namespace tapegrad::nn
