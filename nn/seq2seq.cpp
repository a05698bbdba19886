// seq2seq.cpp — Seq2SeqTransformer.
#include "seq2seq.hpp"

#include <algorithm>

#include "../autograd/grad_mode.hpp"
#include "../autograd/ops.hpp"

namespace tapegrad::nn {

void Seq2SeqConfig::validate() const {
  if (src_vocab_size <= 0 || tgt_vocab_size <= 0 || max_seq_len <= 0 || n_encoder_layers < 0 || n_decoder_layers < 0)
    throw ValueError("Seq2SeqConfig: vocab sizes and max_seq_len must be positive, layer counts >= 0");
  if (norm_info(block.norm).conditional)
    throw ValueError("Seq2SeqConfig: " + block.norm.name + " norms need a condition; use layernorm or rmsnorm");
  if (block.rope)
    throw ValueError("Seq2SeqConfig: block.rope is for TransformerLM; the seq2seq model keeps its learned position "
                     "tables (src_pos, tgt_pos)");
  encoder_block().validate();
  decoder_block().validate();
}

TransformerBlockConfig Seq2SeqConfig::encoder_block() const {
  TransformerBlockConfig c = block;
  c.causal = false;
  c.cross_attention = false;
  return c;
}

TransformerBlockConfig Seq2SeqConfig::decoder_block() const {
  TransformerBlockConfig c = block;
  c.causal = true;
  c.cross_attention = true;
  return c;
}

Seq2SeqTransformer::Seq2SeqTransformer(const Seq2SeqConfig& c) : Module("Seq2SeqTransformer"), config(c) {
  c.validate();
  const TransformerBlockConfig& b = c.block;
  auto emb = [&](std::int64_t n) { return std::make_shared<Embedding>(EmbeddingOptions(n, b.d_model).dtype(b.dtype)); };
  src_emb = register_module("src_emb", emb(c.src_vocab_size));
  src_pos = register_module("src_pos", emb(c.max_seq_len));
  tgt_emb = register_module("tgt_emb", emb(c.tgt_vocab_size));
  tgt_pos = register_module("tgt_pos", emb(c.max_seq_len));

  const Stack enc_stack = Stack::encoder(c.n_encoder_layers, c.n_decoder_layers);
  const Stack dec_stack = Stack::decoder(c.n_encoder_layers, c.n_decoder_layers);
  encoder = register_module("encoder", std::make_shared<ModuleList>());
  for (std::int64_t l = 0; l < c.n_encoder_layers; ++l)
    encoder->push_back(std::make_shared<TransformerBlock>(c.encoder_block(), enc_stack.at(l)));
  decoder = register_module("decoder", std::make_shared<ModuleList>());
  for (std::int64_t l = 0; l < c.n_decoder_layers; ++l)
    decoder->push_back(std::make_shared<TransformerBlock>(c.decoder_block(), dec_stack.at(l)));
  if (placement_info(b.placement).final_norm) {
    const NormSpec spec{b.d_model, b.norm_eps, 0, b.dtype, NormRole::final, b.norm_alpha0(NormRole::final)};
    encoder_norm = register_module("encoder_norm", make_final_norm(b.norm, spec));
    decoder_norm = register_module("decoder_norm", make_final_norm(b.norm, spec));
  }
  if (!c.tie_target_weights)
    head = register_module("head", std::make_shared<Linear>(LinearOptions(b.d_model, c.tgt_vocab_size).bias(false).dtype(b.dtype)));

  for (auto& e : {src_emb, src_pos, tgt_emb, tgt_pos}) init_embedding(*e, c.init);
  const bool b2t = c.b2t_scaling.value_or(false);
  init_blocks(*encoder, c.init, b2t);
  init_blocks(*decoder, c.init, b2t);
}

namespace {
Tensor embed(Embedding& tokens, Embedding& positions, const Tensor& ids, std::int64_t max_len, const char* what) {
  if (ids.dim() != 2 || ids.dtype() != DType::int64)
    throw ShapeError(std::string("Seq2SeqTransformer: ") + what + " must be int64 (B, T), got " + shape_str(ids.shape()));
  const std::int64_t T = ids.size(1);
  if (T == 0 || T > max_len)
    throw ShapeError(std::string("Seq2SeqTransformer: ") + what + " length " + std::to_string(T) + " must be in 1.." +
                     std::to_string(max_len));
  return add(tokens.forward(ids), positions.forward(arange(T, DType::int64)));
}
}  // namespace

Tensor Seq2SeqTransformer::encode(const Tensor& src, const Tensor& src_padding_mask) {
  Tensor h = embed(*src_emb, *src_pos, src, config.max_seq_len, "src");
  BlockContext ctx;
  ctx.key_padding_mask = src_padding_mask;
  for (const auto& m : *encoder) h = static_cast<TransformerBlock&>(*m).forward(h, ctx);
  return encoder_norm ? encoder_norm->forward(h, Tensor()) : h;
}

Tensor Seq2SeqTransformer::decode(const Tensor& tgt, const Tensor& memory, const Tensor& src_padding_mask,
                                  const Tensor& tgt_padding_mask) {
  Tensor h = embed(*tgt_emb, *tgt_pos, tgt, config.max_seq_len, "tgt");
  BlockContext ctx;
  ctx.key_padding_mask = tgt_padding_mask;
  ctx.memory = memory;
  ctx.memory_padding_mask = src_padding_mask;
  for (const auto& m : *decoder) h = static_cast<TransformerBlock&>(*m).forward(h, ctx);
  if (decoder_norm) h = decoder_norm->forward(h, Tensor());
  return head ? head->forward(h) : linear(h, tgt_emb->weight);
}

Tensor Seq2SeqTransformer::forward(const Tensor& src_in, const Tensor& tgt_in, const Tensor& src_mask,
                                   const Tensor& tgt_mask) {
  Tensor src = src_in, tgt = tgt_in, src_padding_mask = src_mask, tgt_padding_mask = tgt_mask;
  ForwardCall call(*this, {&src, &tgt, &src_padding_mask, &tgt_padding_mask});
  return call.output(decode(tgt, encode(src, src_padding_mask), src_padding_mask, tgt_padding_mask));
}

Tensor Seq2SeqTransformer::greedy_decode(const Tensor& src, std::int64_t bos, std::int64_t eos, std::int64_t max_len,
                                         const Tensor& src_padding_mask) {
  NoGradGuard no_grad;
  const bool was_training = is_training();
  eval();
  const Tensor memory = encode(src, src_padding_mask);
  const std::int64_t B = src.size(0);
  std::vector<std::int64_t> out(B, bos);  // (B, t) row-major, grows by one column per step
  std::vector<bool> done(B, false);
  std::int64_t t = 1;
  for (; t < std::min(max_len, config.max_seq_len); ++t) {
    const Tensor logits = decode(Tensor::from_vector(out, {B, t}), memory, src_padding_mask);
    const std::vector<std::int64_t> next = argmax(narrow(logits, 1, t - 1, 1), -1).to_vector<std::int64_t>();
    std::vector<std::int64_t> grown;
    for (std::int64_t b = 0; b < B; ++b) {
      grown.insert(grown.end(), out.begin() + b * t, out.begin() + (b + 1) * t);
      grown.push_back(done[b] ? eos : next[b]);
      done[b] = done[b] || next[b] == eos;
    }
    out = std::move(grown);
    if (std::all_of(done.begin(), done.end(), [](bool d) { return d; })) {
      ++t;
      break;
    }
  }
  train(was_training);
  return Tensor::from_vector(out, {B, static_cast<std::int64_t>(out.size()) / B});
}

void Seq2SeqTransformer::set_activation_checkpointing(bool on) {
  for (const ModuleList* stack : {encoder.get(), decoder.get()})
    for (const auto& b : *stack) static_cast<TransformerBlock&>(*b).checkpoint_activations = on;
}

std::string Seq2SeqTransformer::extra_repr() const {
  return "encoder_layers=" + std::to_string(config.n_encoder_layers) + ", decoder_layers=" +
         std::to_string(config.n_decoder_layers) + ", placement=" + config.block.placement.name;
}

}  // namespace tapegrad::nn
