// model_config.cpp — model configurations to and from checkpoint metadata.
#include "model_config.hpp"

#include <charconv>
#include <set>
#include <type_traits>

#include "../autograd/random.hpp"

namespace tapegrad::io {

namespace {

const std::string kPrefix = "config.";

// ---------------------------------------------------------------- one field <-> one entry

MetaValue encode(std::int64_t v) { return v; }
MetaValue encode(double v) { return v; }
MetaValue encode(bool v) { return static_cast<std::int64_t>(v); }
MetaValue encode(const nn::Placement& p) { return p.name; }
MetaValue encode(const nn::NormKind& n) { return n.name; }
MetaValue encode(const nn::StreamScheme& s) { return s.name; }
MetaValue encode(nn::Activation a) { return nn::activation_name(a); }
MetaValue encode(nn::InitScheme s) { return nn::init_scheme_name(s); }
MetaValue encode(nn::QkNorm n) { return nn::qk_norm_name(n); }
MetaValue encode(DType d) { return std::string(dtype_name(d)); }
MetaValue encode(const std::optional<bool>& b) { return std::string(b ? (*b ? "true" : "false") : "unset"); }

// Where a value is read from, for the errors.
struct Entry {
  const std::string& source;
  const std::string& key;
  [[noreturn]] void fail(const std::string& what) const {
    throw FormatError(source + ": model config entry " + key + " " + what);
  }
};

std::int64_t as_int(const MetaValue& v, const Entry& e) {
  if (const auto* i = std::get_if<std::int64_t>(&v)) return *i;
  e.fail("is not an integer");
}
const std::string& as_string(const MetaValue& v, const Entry& e) {
  if (const auto* s = std::get_if<std::string>(&v)) return *s;
  e.fail("is not a string");
}

void decode(const MetaValue& v, std::int64_t& out, const Entry& e) { out = as_int(v, e); }
void decode(const MetaValue& v, double& out, const Entry& e) {
  if (const auto* d = std::get_if<double>(&v)) out = *d;
  else e.fail("is not a number");
}
void decode(const MetaValue& v, bool& out, const Entry& e) {
  const std::int64_t i = as_int(v, e);
  if (i != 0 && i != 1) e.fail("must be 0 or 1, got " + std::to_string(i));
  out = i == 1;
}
// Names are checked against their registries (a name this build does not know is refused).
template <typename Named, typename FromName>
void decode_name(const MetaValue& v, Named& out, const Entry& e, FromName&& from_name) {
  try {
    out = from_name(as_string(v, e));
  } catch (const ValueError& error) {
    e.fail(std::string("holds a name this build does not know: ") + error.what());
  }
}
void decode(const MetaValue& v, nn::Placement& out, const Entry& e) { decode_name(v, out, e, nn::placement_from_name); }
void decode(const MetaValue& v, nn::NormKind& out, const Entry& e) { decode_name(v, out, e, nn::norm_kind_from_name); }
void decode(const MetaValue& v, nn::StreamScheme& out, const Entry& e) {
  decode_name(v, out, e, nn::stream_scheme_from_name);
}
void decode(const MetaValue& v, nn::Activation& out, const Entry& e) { decode_name(v, out, e, nn::activation_from_name); }
void decode(const MetaValue& v, nn::InitScheme& out, const Entry& e) { decode_name(v, out, e, nn::init_scheme_from_name); }
void decode(const MetaValue& v, nn::QkNorm& out, const Entry& e) { decode_name(v, out, e, nn::qk_norm_from_name); }
void decode(const MetaValue& v, DType& out, const Entry& e) {
  for (DType d : {DType::float32, DType::float64, DType::int64, DType::bfloat16})
    if (as_string(v, e) == dtype_name(d)) {
      out = d;
      return;
    }
  e.fail("is not a dtype name: \"" + as_string(v, e) + "\"");
}
void decode(const MetaValue& v, std::optional<bool>& out, const Entry& e) {
  const std::string& s = as_string(v, e);
  if (s == "unset") out.reset();
  else if (s == "true" || s == "false") out = s == "true";
  else e.fail("must be \"true\", \"false\" or \"unset\", got \"" + s + "\"");
}

// ---------------------------------------------------------------- a whole config

template <typename F>
constexpr bool is_nested_config = std::is_same_v<F, nn::TransformerBlockConfig> || std::is_same_v<F, nn::StreamConfig>;

template <typename Config>
void write_fields(Metadata& out, const std::string& prefix, const Config& config) {
  Config::visit_fields(config, [&](const char* name, const auto& field) {
    using F = std::decay_t<decltype(field)>;
    if constexpr (is_nested_config<F>) write_fields(out, prefix + name + ".", field);
    else out.emplace_back(prefix + name, encode(field));
  });
}

// The config version that introduced a field (model_config.hpp lists them); 1 for the rest.
std::int64_t version_of_field(const std::string& name) {
  static const std::set<std::string> version_2 = {"n_kv_heads", "qk_norm",          "rope",
                                                  "rope_theta", "rope_interleaved", "mix_ln_ratio"};
  static const std::set<std::string> version_3 = {"scheme",           "dwa_dilation",    "dwa_period",
                                                  "value_lambda1",    "value_lambda2",   "value_lambda_learnable",
                                                  "norm_alpha0_attn", "norm_alpha0_ffn", "norm_alpha0_final"};
  static const std::set<std::string> version_4 = {"branch_depth_exponent", "branch_base_depth", "embed_scale",
                                                  "embed_scale_learnable"};
  static const std::set<std::string> version_5 = {"hc_rate", "hc_dynamic", "sinkhorn_iterations", "attnres_block_size"};
  if (version_5.count(name)) return 5;
  if (version_4.count(name)) return 4;
  return version_3.count(name) ? 3 : version_2.count(name) ? 2 : 1;
}

// A field newer than the file keeps its default (the behaviour the file's model was built
// with); any other missing field is an error.
template <typename Config>
void read_fields(const Checkpoint& ck, const std::string& prefix, Config& config, const std::string& source,
                 std::int64_t file_version) {
  Config::visit_fields(config, [&](const char* name, auto& field) {
    using F = std::decay_t<decltype(field)>;
    const std::string key = prefix + name;
    if constexpr (is_nested_config<F>) {
      read_fields(ck, key + ".", field, source, file_version);
    } else {
      const MetaValue* v = ck.find(key);
      if (!v && version_of_field(name) > file_version) return;
      if (!v) Entry{source, key}.fail("is missing");
      decode(*v, field, Entry{source, key});
    }
  });
}

template <typename Config>
Metadata metadata_of(const Config& config, const char* kind) {
  Metadata m = {{kPrefix + "kind", std::string(kind)}, {kPrefix + "version", kModelConfigVersion}};
  write_fields(m, kPrefix, config);
  return m;
}

// The text of a value: integers and names as they are, reals in their shortest exact form.
std::string text_of(const MetaValue& v) {
  if (const auto* i = std::get_if<std::int64_t>(&v)) return std::to_string(*i);
  if (const auto* d = std::get_if<double>(&v)) {
    char buf[32];
    const auto result = std::to_chars(buf, buf + sizeof buf, *d);
    return std::string(buf, result.ptr);
  }
  return std::get<std::string>(v);
}

template <typename Config>
std::vector<std::pair<std::string, std::string>> fields_of(const Config& config) {
  Metadata m;
  write_fields(m, "", config);
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& [key, value] : m) out.emplace_back(key, text_of(value));
  return out;
}

// train_lm wrote these 13 settings as "extra." entries before model files described
// themselves; the other fields had their defaults there, so these rebuild its models exactly.
bool is_legacy_train_lm(const Checkpoint& ck) { return ck.find("extra.vocab_size") && ck.find("extra.placement"); }

nn::TransformerLMConfig legacy_train_lm_config(const Checkpoint& ck, const std::string& source) {
  nn::TransformerLMConfig c;
  auto read = [&](const char* name, auto& field) {
    const std::string key = std::string("extra.") + name;
    const MetaValue* v = ck.find(key);
    if (!v) Entry{source, key}.fail("is missing (a train_lm checkpoint of an older tapegrad)");
    decode(*v, field, Entry{source, key});
  };
  std::int64_t tie = 1;
  read("vocab_size", c.vocab_size);
  read("max_seq_len", c.max_seq_len);
  read("n_layers", c.n_layers);
  read("d_model", c.block.d_model);
  read("n_heads", c.block.n_heads);
  read("d_ff", c.block.d_ff);
  read("activation", c.block.activation);
  read("placement", c.block.placement);
  read("norm", c.block.norm);
  read("residual_scale", c.block.residual_scale);
  read("dropout", c.block.dropout);
  read("tie_weights", tie);
  read("init", c.init);
  c.tie_weights = tie != 0;
  // Placements without α ignored residual_scale then; now they refuse a value other than 1.
  if (!nn::placement_info(c.block.placement).residual_scale) c.block.residual_scale = 1.0;
  return c;
}

// Checks kind and version, and that every "config." entry is one this build knows; returns
// the file's config version.
std::int64_t check_header(const Checkpoint& ck, const std::string& source, const std::string& kind,
                          const Metadata& known) {
  const std::string found = model_kind(ck);
  if (found.empty())
    throw FormatError(source + " holds no model configuration (written by io::save_module, by a training "
                               "checkpoint without one, or by a tapegrad before model files described themselves): build "
                               "the model with its settings and load the weights with io::load_module(model, \"" +
                      source + "\")");
  if (found != kind) throw FormatError(source + " holds a " + found + ", not a " + kind);
  const std::string version_key = kPrefix + "version";
  const MetaValue* version = ck.find(version_key);
  if (!version) Entry{source, version_key}.fail("is missing");
  const std::int64_t v = as_int(*version, Entry{source, version_key});
  if (v < 1 || v > kModelConfigVersion)
    throw FormatError(source + ": model config version " + std::to_string(v) + " (this build of tapegrad reads 1.." +
                      std::to_string(kModelConfigVersion) + "; a newer tapegrad wrote the file)");
  std::set<std::string> keys;
  for (const auto& [key, _] : known) keys.insert(key);
  for (const auto& [key, _] : ck.metadata)
    if (key.rfind(kPrefix, 0) == 0 && !keys.count(key))
      throw FormatError(source + ": " + key + " is not a setting of " + kind + " in this build of tapegrad");
  return v;
}

template <typename Config>
Config config_from(const Checkpoint& ck, const std::string& source, const char* kind) {
  Config c;
  const std::int64_t version = check_header(ck, source, kind, metadata_of(c, kind));
  read_fields(ck, kPrefix, c, source, version);
  try {
    c.validate();
  } catch (const ValueError& e) {
    throw FormatError(source + ": the stored model configuration is invalid: " + e.what());
  }
  return c;
}

}  // namespace

Metadata config_metadata(const nn::TransformerLMConfig& config) { return metadata_of(config, "TransformerLM"); }
Metadata config_metadata(const nn::Seq2SeqConfig& config) { return metadata_of(config, "Seq2SeqTransformer"); }

std::string model_kind(const Checkpoint& ck) {
  const MetaValue* kind = ck.find(kPrefix + "kind");
  if (kind && std::holds_alternative<std::string>(*kind)) return std::get<std::string>(*kind);
  return is_legacy_train_lm(ck) ? "TransformerLM" : "";
}

nn::TransformerLMConfig lm_config_from(const Checkpoint& ck, const std::string& source) {
  if (!ck.find(kPrefix + "kind") && is_legacy_train_lm(ck)) return legacy_train_lm_config(ck, source);
  return config_from<nn::TransformerLMConfig>(ck, source, "TransformerLM");
}

nn::Seq2SeqConfig seq2seq_config_from(const Checkpoint& ck, const std::string& source) {
  return config_from<nn::Seq2SeqConfig>(ck, source, "Seq2SeqTransformer");
}

std::vector<std::pair<std::string, std::string>> config_fields(const nn::TransformerLMConfig& c) { return fields_of(c); }
std::vector<std::pair<std::string, std::string>> config_fields(const nn::Seq2SeqConfig& c) { return fields_of(c); }

namespace {
template <typename M>
void save_any(const M& model, const std::string& path, Format format) {
  Checkpoint c;
  c.kind = "state_dict";
  c.metadata = config_metadata(model.config);
  c.section("model") = state_dict(model);
  save_checkpoint(c, path, format);
}
}  // namespace

void save_model(const nn::TransformerLM& model, const std::string& path, Format format) { save_any(model, path, format); }
void save_model(const nn::Seq2SeqTransformer& model, const std::string& path, Format format) { save_any(model, path, format); }

namespace {

// The sizes a config asks for, checked against the weights the file holds before the model is
// built: a config that describes a far larger model than its file (a damaged or crafted file)
// is refused here, instead of allocating what it says. Every dimension that sizes a
// parameter (vocabulary, context, width, FFN width, depth, classes) is backed by a tensor.
struct WeightCheck {
  const StateDict& weights;
  const std::string& source;
  // set_by names the setting the size comes from where the name does not say it ("stream.hc_rate 4").
  void shape(const std::string& name, const Shape& expected, const std::string& set_by = "") const {
    const Tensor* t = weights.find(name);
    if (!t)
      throw FormatError(source + ": the stored model configuration needs a tensor " + name + ", which the file does not hold");
    if (t->shape() != expected)
      throw FormatError(source + ": the stored model configuration makes " + name + " " + shape_str(expected) +
                        (set_by.empty() ? "" : " (from its " + set_by + ")") + ", the file holds " + shape_str(t->shape()));
  }
  // The number of blocks "<prefix>.<i>." the file holds.
  void depth(const std::string& prefix, std::int64_t expected) const {
    std::int64_t n = 0;
    while (weights.find(prefix + "." + std::to_string(n) + ".attn.out_proj.weight")) ++n;
    if (n != expected)
      throw FormatError(source + ": the stored model configuration has " + std::to_string(expected) + " blocks in " +
                        prefix + ", the file holds " + std::to_string(n));
  }
  void blocks(const std::string& prefix, std::int64_t layers, const nn::TransformerBlockConfig& b) const {
    depth(prefix, layers);
    if (layers > 0) shape(prefix + ".0.ffn.fc1.weight", {b.ff_dim(), b.d_model});
  }
};

void check_weights(const nn::TransformerLMConfig& c, const WeightCheck& w) {
  const std::int64_t C = c.block.d_model;
  w.shape("tok_emb.weight", {c.vocab_size, C});
  if (!c.block.rope) w.shape("pos_emb.weight", {c.max_seq_len, C});  // with rope, max_seq_len sizes nothing
  if (c.n_classes > 0) w.shape("cond_emb.weight", {c.n_classes, c.block_config().cond_dim});
  w.blocks("blocks", c.n_layers, c.block);
  // The widened stream's parameters grow with n² (mHC's φ is n·C × (n² + 2n)): its n must be the
  // file's before the model is built, or a stored hc_rate of 10^4 allocates gigabytes.
  if (nn::stream_info(c.stream.scheme).hc_settings && c.n_layers > 0)
    w.shape(std::string("stream.connections.0.") + (c.stream.scheme.name == "mhc" ? "b_post" : "static_beta"),
            {c.stream.hc_rate}, "stream.hc_rate " + std::to_string(c.stream.hc_rate));
}

void check_weights(const nn::Seq2SeqConfig& c, const WeightCheck& w) {
  const std::int64_t C = c.block.d_model;
  w.shape("src_emb.weight", {c.src_vocab_size, C});
  w.shape("tgt_emb.weight", {c.tgt_vocab_size, C});
  w.shape("src_pos.weight", {c.max_seq_len, C});
  w.blocks("encoder", c.n_encoder_layers, c.block);
  w.blocks("decoder", c.n_decoder_layers, c.block);
}

}  // namespace

template <typename M>
std::shared_ptr<M> model_from(const Checkpoint& ck, const std::string& source) {
  const auto config = [&] {
    if constexpr (std::is_same_v<M, nn::TransformerLM>) return lm_config_from(ck, source);
    else return seq2seq_config_from(ck, source);
  }();
  const StateDict* weights = ck.find_section("model");
  if (!weights) throw FormatError(source + ": no 'model' section (the weights)");
  check_weights(config, WeightCheck{*weights, source});
  // Building the model draws its initial weights from the default generator; the file's
  // weights replace them, and the generator is put back as it was.
  const GeneratorState rng = default_generator().get_state();
  std::shared_ptr<M> model;
  try {
    model = std::make_shared<M>(config);
  } catch (const ValueError& e) {  // a setting its placement or stream scheme refuses when it builds
    default_generator().set_state(rng);
    throw FormatError(source + ": the stored model configuration is invalid: " + e.what());
  }
  default_generator().set_state(rng);
  try {
    load_state_dict(*model, *weights, /*strict=*/true);
  } catch (const Error& e) {  // a tensor missing, extra, or of another shape or dtype
    throw FormatError(source + ": the weights do not fit the stored model configuration: " + e.what());
  }
  return model;
}

template <typename M>
std::shared_ptr<M> load_model(const std::string& path) {
  return model_from<M>(load_checkpoint(path), path);
}

template std::shared_ptr<nn::TransformerLM> model_from(const Checkpoint&, const std::string&);
template std::shared_ptr<nn::Seq2SeqTransformer> model_from(const Checkpoint&, const std::string&);
template std::shared_ptr<nn::TransformerLM> load_model(const std::string&);
template std::shared_ptr<nn::Seq2SeqTransformer> load_model(const std::string&);

}  // namespace tapegrad::io
