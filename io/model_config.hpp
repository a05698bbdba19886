// model_config.hpp — self-describing model files: a model's complete configuration stored as
// checkpoint metadata beside its weights, so that the file alone rebuilds the model.
//
//   io::save_model(lm, "lm.tgc");                             // weights + every config field
//   auto lm = io::load_model<nn::TransformerLM>("lm.tgc");    // rebuilt from the file alone
//
// Layout: metadata "config.kind" ("TransformerLM" or "Seq2SeqTransformer"), "config.version"
// (kModelConfigVersion), then one entry per field in the order of the config's visit_fields:
// "config.vocab_size" = 86, "config.block.placement" = "pre", ... Integers are integers, reals
// reals, booleans 0/1, names (placement, norm, activation, init, dtype) strings, an unset
// optional the string "unset". A training checkpoint (training/training_checkpoint.hpp)
// carries the same entries. Files written before the config was stored are refused, naming
// what to do, except train_lm's own checkpoints, whose settings (13 "extra." entries) are read.
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "../nn/seq2seq.hpp"
#include "../nn/transformer_lm.hpp"
#include "checkpoint.hpp"

namespace tapegrad::io {

using Metadata = std::vector<std::pair<std::string, MetaValue>>;

// The version of the config layout this build writes; it reads 1..kModelConfigVersion.
//   1  the first self-describing files
//   2  today's decoders: block.n_kv_heads, qk_norm, rope, rope_theta, rope_interleaved, and
//      Mix-LN's block.mix_ln_ratio (absent from a version-1 file: their defaults, which are
//      what its model was built with)
//   3  the residual stream: stream.scheme and its settings (absent from older files: the
//      plain stream, which is what their models ran); the initial α of the point-wise norms
//      (dyt, derf) by role: block.norm_alpha0_attn, norm_alpha0_ffn, norm_alpha0_final (absent
//      from older files, whose norms had no α: 1)
//   4  the depth parametrization's block.branch_depth_exponent and branch_base_depth (absent
//      from older files: 0 and 1, the standard parametrization their models ran); the token
//      embedding's multiplier embed_scale and embed_scale_learnable (absent: 1, fixed)
//   5  Hyper-Connections and mHC: stream.hc_rate, hc_dynamic, sinkhorn_iterations; Attention
//      Residuals' stream.attnres_block_size (absent from older files, whose schemes did not read
//      them: the defaults)
inline constexpr std::int64_t kModelConfigVersion = 5;

// The "config.*" entries of a model.
Metadata config_metadata(const nn::TransformerLMConfig& config);
Metadata config_metadata(const nn::Seq2SeqConfig& config);

// "TransformerLM", "Seq2SeqTransformer", or "" when the checkpoint holds no model config.
std::string model_kind(const Checkpoint& checkpoint);
// The configuration stored in a checkpoint. Throws FormatError naming `source` (a path) and
// the entry at fault, and saying what to do when the file holds no config or another kind.
nn::TransformerLMConfig lm_config_from(const Checkpoint& checkpoint, const std::string& source = "<memory>");
nn::Seq2SeqConfig seq2seq_config_from(const Checkpoint& checkpoint, const std::string& source = "<memory>");

// Every field as ("block.d_model", "128"), in order, as the files and the tools print them.
std::vector<std::pair<std::string, std::string>> config_fields(const nn::TransformerLMConfig& config);
std::vector<std::pair<std::string, std::string>> config_fields(const nn::Seq2SeqConfig& config);

// A state-dict file (kind "state_dict", section "model") with the model's config.
void save_model(const nn::TransformerLM& model, const std::string& path, Format format = Format::binary);
void save_model(const nn::Seq2SeqTransformer& model, const std::string& path, Format format = Format::binary);

// The model a file describes, built from its config and loaded with its weights (strict):
// a file of save_model or a training checkpoint. The default generator is left as it was
// (building a model draws its initial weights from it). M: nn::TransformerLM or
// nn::Seq2SeqTransformer; a file of the other kind is refused, naming both.
template <typename M>
std::shared_ptr<M> load_model(const std::string& path);
template <typename M>
std::shared_ptr<M> model_from(const Checkpoint& checkpoint, const std::string& source = "<memory>");

}  // namespace tapegrad::io
