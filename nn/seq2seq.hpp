// seq2seq.hpp — an encoder-decoder transformer for translation-like tasks (Vaswani et al.
// 2017), the setting in which B2T was evaluated:
//
//   memory = encoder(src_emb(src) + src_pos)            non-causal self-attention + FFN
//   logits = head(decoder(tgt_emb(tgt) + tgt_pos, memory))  causal self-attn, cross-attn, FFN
//
// Stacks whose placement asks for it (Pre-LN) end with a final norm on each side. DeepNorm
// uses the encoder-decoder constants of Wang et al. 2022; b2t_scaling scales each side's
// weights by that side's L^(-1/2).
#pragma once

#include <optional>

#include "containers.hpp"
#include "embedding.hpp"
#include "model_init.hpp"
#include "transformer_block.hpp"

namespace tapegrad::nn {

struct Seq2SeqConfig {
  std::int64_t src_vocab_size = 64;
  std::int64_t tgt_vocab_size = 64;
  std::int64_t max_seq_len = 64;
  std::int64_t n_encoder_layers = 3;
  std::int64_t n_decoder_layers = 3;
  TransformerBlockConfig block;  // causal and cross_attention are set per side
  bool tie_target_weights = true;  // decoder head tied to the target embedding
  InitScheme init = InitScheme::xavier;
  std::optional<bool> b2t_scaling;  // L^(-1/2) weight scaling per side (model_init.hpp); off unless set

  // Throws ValueError naming the first invalid setting.
  void validate() const;
  // What the encoder's blocks (not causal, no cross-attention) and the decoder's (causal,
  // cross-attention) are built from.
  TransformerBlockConfig encoder_block() const;
  TransformerBlockConfig decoder_block() const;
  bool operator==(const Seq2SeqConfig&) const = default;
  // Every field with its name, in order (see TransformerBlockConfig::visit_fields).
  template <typename Self, typename F>
  static void visit_fields(Self& self, F&& f) {
    f("src_vocab_size", self.src_vocab_size);
    f("tgt_vocab_size", self.tgt_vocab_size);
    f("max_seq_len", self.max_seq_len);
    f("n_encoder_layers", self.n_encoder_layers);
    f("n_decoder_layers", self.n_decoder_layers);
    f("block", self.block);
    f("tie_target_weights", self.tie_target_weights);
    f("init", self.init);
    f("b2t_scaling", self.b2t_scaling);
  }
};

class Seq2SeqTransformer : public Module {
 public:
  explicit Seq2SeqTransformer(const Seq2SeqConfig& config);
  // src: int64 (B, S), padding mask (B, S) nonzero = pad -> memory (B, S, C)
  Tensor encode(const Tensor& src, const Tensor& src_padding_mask = Tensor());
  // tgt: int64 (B, T) -> logits (B, T, tgt_vocab)
  Tensor decode(const Tensor& tgt, const Tensor& memory, const Tensor& src_padding_mask = Tensor(),
                const Tensor& tgt_padding_mask = Tensor());
  // encode then decode. Hook inputs (forward only, not encode and decode alone): {src, tgt,
  // src_padding_mask, tgt_padding_mask}.
  Tensor forward(const Tensor& src, const Tensor& tgt, const Tensor& src_padding_mask = Tensor(),
                 const Tensor& tgt_padding_mask = Tensor());
  // Greedy decoding from bos until eos or max_len tokens, for each source row: (B, <= max_len).
  // Rows that finished early are padded with eos.
  Tensor greedy_decode(const Tensor& src, std::int64_t bos, std::int64_t eos, std::int64_t max_len,
                       const Tensor& src_padding_mask = Tensor());
  std::string extra_repr() const override;
  // Activation checkpointing in every block of both stacks (TransformerLM's, the same).
  void set_activation_checkpointing(bool on);

  Seq2SeqConfig config;
  std::shared_ptr<Embedding> src_emb, src_pos, tgt_emb, tgt_pos;
  std::shared_ptr<ModuleList> encoder, decoder;
  std::shared_ptr<Norm> encoder_norm, decoder_norm;  // when the placement asks for them (pre)
  std::shared_ptr<Linear> head;                          // untied only
};

}  // namespace tapegrad::nn
