// transformer_lm.hpp — a decoder-only language model (GPT-style):
//
//   h0 = s·tok_emb[tokens] + pos_emb[0..T-1]          (B, T, C); s = embed_scale, 1 by default
//   h_l = block_l(h_{l-1})  for l = 1..L               causal self-attention + FFN
//   logits = lm_head(final_norm(h_L))                  (B, T, V); final_norm when the
//                                                      placement asks for one (Pre-LN)
//
// Under nGPT (placement ngpt, nn/ngpt.hpp) there is no final norm, the logits are scaled per
// token, logits = s_z ⊙ lm_head(h_L), and every matrix is built with unit rows along d_model
// (ngpt_normalize_weights; training keeps them so with register_ngpt_normalization).
//
// The blocks run through the model's residual stream (nn/stream/): the plain stream above by
// default, or a scheme that joins blocks across the depth (DenseFormer, value residual).
//
// The LM head is optionally tied to the token embedding (logits = h·Eᵀ, no extra weight).
// With n_classes > 0 the model is conditional: a class (task) id picks a vector from
// cond_emb that drives every AdaLN / AdaLN-Zero norm.
#pragma once

#include <optional>

#include "containers.hpp"
#include "embedding.hpp"
#include "generate.hpp"
#include "kv_cache.hpp"
#include "model_init.hpp"
#include "stream/stream.hpp"
#include "transformer_block.hpp"

namespace tapegrad::nn {

struct TransformerLMConfig {
  std::int64_t vocab_size = 256;
  std::int64_t max_seq_len = 256;
  std::int64_t n_layers = 4;
  TransformerBlockConfig block;  // block.causal and block.cross_attention are set by the model
  bool tie_weights = true;
  InitScheme init = InitScheme::gpt2;
  // The optional L^(-1/2) scaling of the blocks' Linear weights (model_init.hpp); off unless set.
  std::optional<bool> b2t_scaling;
  std::int64_t n_classes = 0;  // > 0: conditional model (block.norm adaln or adaln_zero)
  StreamConfig stream;         // how the blocks join across the depth (nn/stream/); plain by default
  // s, the token embedding's multiplier: h0 = s·E[tokens] (+ positions). 1 (none) by default;
  // √d_model is Gemma's constant (Gemma Team 2024) and, learned from √d_model, what the DyT
  // paper adds to its LLaMA models (Zhu et al. 2025, "Transformers without Normalization",
  // arXiv 2503.10622): without a norm at the bottom of the stack, N(0, 0.02) embeddings are
  // too small for tanh(αx) to pass on. embed_scale_learnable makes s a parameter
  // ("embed_scale", 0-d, outside weight decay) that starts at embed_scale.
  double embed_scale = 1.0;
  bool embed_scale_learnable = false;

  // Throws ValueError naming the first invalid setting.
  void validate() const;
  // What every block is built from: block with causal on, no cross-attention, and cond_dim =
  // d_model when the model is conditional and block.cond_dim is 0.
  TransformerBlockConfig block_config() const;
  bool operator==(const TransformerLMConfig&) const = default;
  // Every field with its name, in order (see TransformerBlockConfig::visit_fields).
  template <typename Self, typename F>
  static void visit_fields(Self& self, F&& f) {
    f("vocab_size", self.vocab_size);
    f("max_seq_len", self.max_seq_len);
    f("n_layers", self.n_layers);
    f("block", self.block);
    f("tie_weights", self.tie_weights);
    f("init", self.init);
    f("b2t_scaling", self.b2t_scaling);
    f("n_classes", self.n_classes);
    f("stream", self.stream);  // model config version 3 (older files: the plain stream)
    f("embed_scale", self.embed_scale);  // model config version 4 (older files: 1, fixed)
    f("embed_scale_learnable", self.embed_scale_learnable);
  }
};

class TransformerLM : public Module {
 public:
  explicit TransformerLM(const TransformerLMConfig& config);
  // tokens: int64 (B, T) with T <= max_seq_len -> logits (B, T, vocab_size).
  // classes: int64 (B), required when the model is conditional. Hook inputs: {tokens, classes}.
  // Each block's output: a forward hook on blocks (nn::OutputRecorder, diagnostics.hpp).
  Tensor forward(const Tensor& tokens, const Tensor& classes = Tensor());
  // model(tokens), as in PyTorch: the same as forward (which runs the hooks itself).
  Tensor operator()(const Tensor& tokens, const Tensor& classes = Tensor()) { return forward(tokens, classes); }
  // Appends up to max_new_tokens tokens (generate.hpp: sampling, stop tokens) to the prompt
  // (B, T) (or (T)) -> (B, T + n), n <= max_new_tokens. The prompt runs once, then one token per
  // step through a KVCache. T + max_new_tokens may exceed max_seq_len with rope, or with
  // options.sliding_window (learned positions end there: otherwise ValueError). Runs in eval
  // mode without recording, restores the mode.
  Tensor generate(const Tensor& prompt, std::int64_t max_new_tokens, const GenerateOptions& options = {},
                  const Tensor& classes = Tensor());
  // The generation step: tokens int64 (B, Tn) at positions cache.length() .. + Tn − 1 ->
  // logits (B, Tn, vocab_size), their keys and values appended to the cache (then advanced by
  // Tn). The same logits as forward() on the whole sequence, last Tn positions. Inference only
  // (under NoGradGuard); no forward hooks.
  Tensor forward_cached(const Tensor& tokens, KVCache& cache, const Tensor& classes = Tensor());
  // An empty cache for batch rows of up to max_length tokens, sized by the blocks' kv heads.
  KVCache make_kv_cache(std::int64_t batch, std::int64_t max_length) const;
  // The longest sequence the model reads: max_seq_len with learned positions, none with rope.
  std::optional<std::int64_t> max_length() const;
  std::string extra_repr() const override;
  // The logits of the last block's output h (B, T, C): the final norm when there is one (cond:
  // its condition), the head, and nGPT's s_z: forward's last lines, and the logit lens's.
  Tensor readout(const Tensor& h, const Tensor& cond = Tensor());
  // Activation checkpointing in every block (TransformerBlock::checkpoint_activations): less
  // memory, the same gradients, about one more forward pass per step. Not a model setting:
  // files do not record it. Refused (ValueError) with a stream that reaches into the blocks.
  void set_activation_checkpointing(bool on);

  TransformerLMConfig config;
  std::shared_ptr<Embedding> tok_emb, pos_emb, cond_emb;
  std::shared_ptr<ModuleList> blocks;
  std::shared_ptr<ResidualStream> stream;  // runs the blocks (config.stream); its parameters under "stream."
  std::shared_ptr<Norm> final_norm;    // when the placement asks for one (pre)
  std::shared_ptr<Linear> lm_head;     // untied only
  Tensor embed_scale;                  // s when config.embed_scale_learnable (0-d); undefined otherwise
  Tensor s_z;                          // nGPT's s̃ of the logits' scale (vocab_size); undefined otherwise

 private:
  // forward's body; with a cache, positions start at its length and the blocks extend it.
  Tensor run(const Tensor& tokens, const Tensor& classes, KVCache* cache);
};

}  // namespace tapegrad::nn
