// lm_common.hpp — what train_lm and sample share: the model's settings as checkpoint
// metadata (so a checkpoint says which model it holds) and where the tokenizer is kept.
#pragma once

#include <memory>
#include <string>

#include <tapegrad/training/training_checkpoint.hpp>
#include <tapegrad/tapegrad.hpp>

namespace lm {

// The tokenizer is saved beside the checkpoint: run.tgc -> run.tgc.tokenizer
inline std::string tokenizer_path(const std::string& checkpoint) { return checkpoint + ".tokenizer"; }

// The model settings as "extra" metadata of a training checkpoint.
inline std::vector<std::pair<std::string, tapegrad::io::MetaValue>> config_metadata(const tapegrad::nn::TransformerLMConfig& c) {
  using namespace tapegrad::nn;
  return {{"vocab_size", c.vocab_size},
          {"max_seq_len", c.max_seq_len},
          {"n_layers", c.n_layers},
          {"d_model", c.block.d_model},
          {"n_heads", c.block.n_heads},
          {"d_ff", c.block.d_ff},
          {"activation", activation_name(c.block.activation)},
          {"placement", placement_name(c.block.placement)},
          {"norm", norm_kind_name(c.block.norm)},
          {"residual_scale", c.block.residual_scale},
          {"dropout", c.block.dropout},
          {"tie_weights", static_cast<std::int64_t>(c.tie_weights)},
          {"init", init_scheme_name(c.init)}};
}

// The model settings stored in a checkpoint.
inline tapegrad::nn::TransformerLMConfig config_from(const tapegrad::io::Checkpoint& ck) {
  using namespace tapegrad::nn;
  auto i = [&](const std::string& k) { return ck.get_int("extra." + k); };
  auto d = [&](const std::string& k) { return ck.get_double("extra." + k); };
  auto s = [&](const std::string& k) { return ck.get_string("extra." + k); };
  TransformerLMConfig c;
  c.vocab_size = i("vocab_size");
  c.max_seq_len = i("max_seq_len");
  c.n_layers = i("n_layers");
  c.block.d_model = i("d_model");
  c.block.n_heads = i("n_heads");
  c.block.d_ff = i("d_ff");
  c.block.activation = activation_from_name(s("activation"));
  c.block.placement = placement_from_name(s("placement"));
  c.block.norm = norm_kind_from_name(s("norm"));
  c.block.residual_scale = d("residual_scale");
  c.block.dropout = d("dropout");
  c.tie_weights = i("tie_weights") != 0;
  c.init = init_scheme_from_name(s("init"));
  return c;
}

}  // namespace lm
