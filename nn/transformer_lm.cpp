// transformer_lm.cpp — TransformerLM.
#include "transformer_lm.hpp"

#include <algorithm>
#include <cmath>

#include "../autograd/grad_mode.hpp"
#include "../autograd/ops.hpp"
#include "../autograd/random.hpp"
#include "init.hpp"
#include "name_list.hpp"

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
  block_config().validate();
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
  if (placement_info(b.placement).final_norm)
    final_norm = register_module("final_norm", make_final_norm(b.norm, NormSpec{b.d_model, b.norm_eps, b.cond_dim, b.dtype}));
  if (!c.tie_weights)
    lm_head = register_module("lm_head", std::make_shared<Linear>(LinearOptions(b.d_model, c.vocab_size).bias(false).dtype(b.dtype)));

  init_embedding(*tok_emb, c.init);
  if (pos_emb) init_embedding(*pos_emb, c.init);
  if (lm_head && c.init == InitScheme::gpt2) init::normal_(lm_head->weight, 0.0, 0.02);
  init_blocks(*blocks, c.init, c.b2t_scaling.value_or(false));
}

Tensor TransformerLM::forward(const Tensor& input, const Tensor& input_classes) {
  Tensor tokens = input, classes = input_classes;
  ForwardCall call(*this, {&tokens, &classes});
  if (tokens.dim() != 2 || tokens.dtype() != DType::int64)
    throw ShapeError("TransformerLM: tokens must be int64 (B, T), got " + std::string(dtype_name(tokens.dtype())) +
                     " " + shape_str(tokens.shape()));
  const std::int64_t B = tokens.size(0), T = tokens.size(1);
  if (T > config.max_seq_len || T == 0)
    throw ShapeError("TransformerLM: sequence length " + std::to_string(T) + " must be in 1.." +
                     std::to_string(config.max_seq_len) + " (max_seq_len)");
  BlockContext ctx;
  if (cond_emb) {
    if (!classes.defined() || classes.dtype() != DType::int64 || classes.shape() != Shape{B})
      throw ShapeError("TransformerLM: this conditional model needs classes as int64 (B = " + std::to_string(B) +
                       "), got " + (classes.defined() ? shape_str(classes.shape()) : std::string("none")));
    ctx.cond = cond_emb->forward(classes);
  }
  Tensor h = tok_emb->forward(tokens);                          // (B, T, C)
  if (pos_emb) h = add(h, pos_emb->forward(arange(T, DType::int64)));  // + (T, C); rope: in attention
  for (const auto& m : *blocks) h = static_cast<TransformerBlock&>(*m).forward(h, ctx);
  if (final_norm) h = final_norm->forward(h, ctx.cond);
  return call.output(lm_head ? lm_head->forward(h) : linear(h, tok_emb->weight));
}

Tensor TransformerLM::generate(const Tensor& prompt, std::int64_t max_new_tokens, const GenerateOptions& o,
                               const Tensor& classes) {
  if (o.temperature < 0) throw ValueError("generate: temperature must be >= 0");
  Tensor tokens = prompt.dim() == 1 ? prompt.reshape({1, prompt.size(0)}) : prompt;
  if (tokens.dim() != 2 || tokens.size(1) == 0 || tokens.dtype() != DType::int64)
    throw ShapeError("generate: prompt must be int64 (T) or (B, T) with T >= 1, got " + shape_str(prompt.shape()));
  NoGradGuard no_grad;
  const bool was_training = is_training();
  eval();
  Generator& gen = o.gen ? *o.gen : default_generator();
  const std::int64_t B = tokens.size(0), V = config.vocab_size;
  std::vector<std::vector<std::int64_t>> seqs(B);
  const std::vector<std::int64_t> flat = tokens.to_vector<std::int64_t>();
  for (std::int64_t b = 0; b < B; ++b) seqs[b].assign(flat.begin() + b * tokens.size(1), flat.begin() + (b + 1) * tokens.size(1));
  for (std::int64_t step = 0; step < max_new_tokens; ++step) {
    // the last max_seq_len tokens of each sequence (no KV cache: recompute the window)
    const std::int64_t len = static_cast<std::int64_t>(seqs[0].size());
    const std::int64_t start = std::max<std::int64_t>(0, len - config.max_seq_len), T = len - start;
    std::vector<std::int64_t> window;
    for (const auto& s : seqs) window.insert(window.end(), s.begin() + start, s.end());
    const Tensor logits = forward(Tensor::from_vector(window, {B, T}), classes);
    const std::vector<double> last = narrow(logits, 1, T - 1, 1).to_vector();  // (B, 1, V)
    for (std::int64_t b = 0; b < B; ++b) {
      std::vector<double> row(last.begin() + b * V, last.begin() + (b + 1) * V);
      std::int64_t next = std::max_element(row.begin(), row.end()) - row.begin();
      if (o.temperature > 0) {
        // keep the top_k largest logits, then sample from softmax(logits / temperature)
        std::vector<double> sorted = row;
        double cutoff = -INFINITY;
        if (o.top_k > 0 && o.top_k < V) {
          std::nth_element(sorted.begin(), sorted.begin() + (o.top_k - 1), sorted.end(), std::greater<>());
          cutoff = sorted[o.top_k - 1];
        }
        const double top = row[next];
        double total = 0;
        for (double& v : row) total += (v = v >= cutoff ? std::exp((v - top) / o.temperature) : 0.0);
        double u = gen.next_double() * total;
        for (next = 0; next + 1 < V && (u -= row[next]) >= 0; ++next) {
        }
      }
      seqs[b].push_back(next);
    }
  }
  train(was_training);
  std::vector<std::int64_t> out;
  for (const auto& s : seqs) out.insert(out.end(), s.begin(), s.end());
  return Tensor::from_vector(out, {B, static_cast<std::int64_t>(seqs[0].size())});
}

void TransformerLM::set_activation_checkpointing(bool on) {
  for (const auto& b : *blocks) static_cast<TransformerBlock&>(*b).checkpoint_activations = on;
}

std::string TransformerLM::extra_repr() const {
  return "vocab_size=" + std::to_string(config.vocab_size) + ", n_layers=" + std::to_string(config.n_layers) +
         ", d_model=" + std::to_string(config.block.d_model) + ", placement=" + config.block.placement.name +
         (config.tie_weights ? ", tied" : "");
}

}  // namespace tapegrad::nn
