// transformer_lm.cpp — TransformerLM.
#include "transformer_lm.hpp"

#include <algorithm>
#include <cmath>

#include "../autograd/grad_mode.hpp"
#include "../autograd/ops.hpp"
#include "../autograd/random.hpp"
#include "init.hpp"
#include "name_list.hpp"
#include "ngpt.hpp"

namespace tapegrad::nn {

void TransformerLMConfig::validate() const {
  if (vocab_size <= 0 || max_seq_len <= 0 || n_layers < 0)
    throw ValueError("TransformerLMConfig: vocab_size and max_seq_len must be positive and n_layers >= 0");
  const NormInfo& norm = norm_info(block.norm);
  if (norm.conditional && n_classes <= 0)
    throw ValueError("TransformerLMConfig: norm " + norm.name + " needs n_classes > 0 (the condition)");
  if (!norm.conditional && n_classes > 0)
    throw ValueError("TransformerLMConfig: n_classes = " + std::to_string(n_classes) + " needs a conditional norm (" +
                     name_list_if(norm_registry(), [](const NormInfo& n) { return n.conditional; }) + "), got " + norm.name);
  if (!(embed_scale > 0) || !std::isfinite(embed_scale))
    throw ValueError("TransformerLMConfig: embed_scale must be a positive number (1: none; √d_model = " +
                     number_str(std::sqrt(static_cast<double>(block.d_model))) + " for this width), got " +
                     number_str(embed_scale));
  block_config().validate();
  stream.validate();
  if (placement_info(block.placement).hypersphere) {  // the stream starts on the sphere and stays there
    if (embed_scale != 1.0 || embed_scale_learnable)
      throw ValueError("TransformerLMConfig: placement " + block.placement.name + " does not go with embed_scale "
                       "(its embeddings are unit vectors, and the first block normalizes its input); leave it at 1");
    if (stream.scheme.name != StreamConfig{}.scheme.name)  // the plain stream: each block reads the one before
      throw ValueError("TransformerLMConfig: placement " + block.placement.name + " does not go with stream " +
                       stream.scheme.name + " (a mix of blocks' outputs leaves the sphere); use the plain stream");
  }
}

TransformerBlockConfig TransformerLMConfig::block_config() const {
  TransformerBlockConfig c = block;
  c.causal = true;
  c.cross_attention = false;
  if (n_classes > 0 && c.cond_dim <= 0) c.cond_dim = c.d_model;
  return c;
}

TransformerLM::TransformerLM(const TransformerLMConfig& c) : Module("TransformerLM"), config(c) {
  c.validate();
  const TransformerBlockConfig b = c.block_config();
  tok_emb = register_module("tok_emb", std::make_shared<Embedding>(EmbeddingOptions(c.vocab_size, b.d_model).dtype(b.dtype)));
  if (!b.rope)  // rotary positions (in each block's attention) replace the learned table
    pos_emb = register_module("pos_emb", std::make_shared<Embedding>(EmbeddingOptions(c.max_seq_len, b.d_model).dtype(b.dtype)));
  if (c.n_classes > 0)
    cond_emb = register_module("cond_emb", std::make_shared<Embedding>(EmbeddingOptions(c.n_classes, b.cond_dim).dtype(b.dtype)));
  blocks = register_module("blocks", std::make_shared<ModuleList>());
  const Stack stack = Stack::decoder_only(c.n_layers);
  for (std::int64_t l = 0; l < c.n_layers; ++l) blocks->push_back(std::make_shared<TransformerBlock>(b, stack.at(l)));
  stream = register_module("stream", stream_info(c.stream.scheme).make(StreamBuild{c.stream, c.n_layers, b}));
  if (placement_info(b.placement).final_norm)
    final_norm = register_module("final_norm", make_final_norm(b.norm, b.norm_spec(NormRole::final)));
  if (c.embed_scale_learnable) embed_scale = register_parameter("embed_scale", full({}, c.embed_scale, b.dtype));
  if (!c.tie_weights)
    lm_head = register_module("lm_head", std::make_shared<Linear>(LinearOptions(b.d_model, c.vocab_size).bias(false).dtype(b.dtype)));
  const bool hypersphere = placement_info(b.placement).hypersphere;
  if (hypersphere) s_z = register_parameter("s_z", full({c.vocab_size}, ngpt_s_z(b.d_model).scale, b.dtype));

  init_embedding(*tok_emb, c.init);
  if (pos_emb) init_embedding(*pos_emb, c.init);
  if (lm_head && (c.init == InitScheme::gpt2 || c.init == InitScheme::gpt2_unscaled)) init::normal_(lm_head->weight, 0.0, 0.02);
  init_blocks(*blocks, c.init, c.b2t_scaling.value_or(false));
  if (hypersphere) ngpt_normalize_weights(*this);  // the init's directions, on the sphere
}

Tensor TransformerLM::forward(const Tensor& input, const Tensor& input_classes) {
  Tensor tokens = input, classes = input_classes;
  ForwardCall call(*this, {&tokens, &classes});
  return call.output(run(tokens, classes, nullptr));
}

Tensor TransformerLM::forward_cached(const Tensor& tokens, KVCache& cache, const Tensor& classes) {
  return run(tokens, classes, &cache);
}

Tensor TransformerLM::run(const Tensor& tokens, const Tensor& classes, KVCache* cache) {
  if (tokens.dim() != 2 || tokens.dtype() != DType::int64)
    throw ShapeError("TransformerLM: tokens must be int64 (B, T), got " + std::string(dtype_name(tokens.dtype())) +
                     " " + shape_str(tokens.shape()));
  const std::int64_t B = tokens.size(0), T = tokens.size(1), start = cache ? cache->length() : 0;
  if (T == 0 || (!cache && T > config.max_seq_len))  // a cache's steps: no limit with rope
    throw ShapeError("TransformerLM: sequence length " + std::to_string(T) + " must be in 1.." +
                     std::to_string(config.max_seq_len) + " (max_seq_len)");
  if (pos_emb && start + T > config.max_seq_len)
    throw ShapeError("TransformerLM: positions " + std::to_string(start) + ".." + std::to_string(start + T - 1) +
                     " go past max_seq_len " + std::to_string(config.max_seq_len) + " of the learned positions");
  BlockContext ctx;
  ctx.kv_cache = cache;
  if (cond_emb) {
    if (!classes.defined() || classes.dtype() != DType::int64 || classes.shape() != Shape{B})
      throw ShapeError("TransformerLM: this conditional model needs classes as int64 (B = " + std::to_string(B) +
                       "), got " + (classes.defined() ? shape_str(classes.shape()) : std::string("none")));
    ctx.cond = cond_emb->forward(classes);
  }
  Tensor h = tok_emb->forward(tokens);  // (B, T, C)
  if (embed_scale.defined()) h = mul(h, embed_scale);
  else if (config.embed_scale != 1.0) h = mul(h, config.embed_scale);
  if (pos_emb)  // + (T, C) of positions start .. start + T − 1; rope: in attention
    h = add(h, pos_emb->forward(start == 0 ? arange(T, DType::int64)
                                           : arange(static_cast<double>(start), static_cast<double>(start + T), 1.0,
                                                    DType::int64)));
  StreamState s = stream->begin(h);
  stream->observe(0, s);
  for (std::size_t l = 0; l < blocks->size(); ++l) {
    stream->run_block(s, static_cast<TransformerBlock&>(*(*blocks)[l]), ctx, static_cast<std::int64_t>(l));
    stream->observe(static_cast<std::int64_t>(l) + 1, s);
  }
  h = stream->end(s);
  if (cache) cache->advance(T);  // every block stored its T positions
  return readout(h, ctx.cond);
}

Tensor TransformerLM::readout(const Tensor& stream_out, const Tensor& cond) {
  const Tensor h = final_norm ? final_norm->forward(stream_out, cond) : stream_out;  // Post-LN, nGPT: as it is
  const Tensor logits = lm_head ? lm_head->forward(h) : linear(h, tok_emb->weight);  // (B, T, V)
  return s_z.defined() ? mul(mul(s_z, ngpt_s_z(config.block.d_model).factor()), logits) : logits;
}

KVCache TransformerLM::make_kv_cache(std::int64_t batch, std::int64_t max_length) const {
  const TransformerBlockConfig b = config.block_config();
  return KVCache(config.n_layers, batch, b.n_kv_heads > 0 ? b.n_kv_heads : b.n_heads, max_length, b.d_model / b.n_heads,
                 b.dtype);
}

std::optional<std::int64_t> TransformerLM::max_length() const {
  if (pos_emb) return config.max_seq_len;
  return std::nullopt;
}

void TransformerLM::set_activation_checkpointing(bool on) {
  if (on && stream->reaches_into_blocks())
    throw ValueError("TransformerLM: activation checkpointing recomputes each block alone, but the stream scheme " +
                     config.stream.scheme.name + " reaches into the blocks' attention or replaces their formula; train it "
                     "without checkpointing");
  for (const auto& b : *blocks) static_cast<TransformerBlock&>(*b).checkpoint_activations = on;
}

std::string TransformerLM::extra_repr() const {
  return "vocab_size=" + std::to_string(config.vocab_size) + ", n_layers=" + std::to_string(config.n_layers) +
         ", d_model=" + std::to_string(config.block.d_model) + ", placement=" + config.block.placement.name +
         (config.stream.scheme.name != "plain" ? ", stream=" + config.stream.scheme.name : "") +
         (config.tie_weights ? ", tied" : "");
}

}  // namespace tapegrad::nn
