// hf_tensors.cpp — renaming, checking and transposing Hugging Face tensors (hf_tensors.hpp).
#include "hf_tensors.hpp"

#include <unordered_set>

#include "errors.hpp"
#include "file.hpp"
#include "names.hpp"
#include "safetensors.hpp"

namespace tapegrad::io {

namespace {
Shape file_shape(const HfTensor& t) { return t.transposed ? Shape(t.shape.rbegin(), t.shape.rend()) : t.shape; }
}  // namespace

StateDict strip_hf_prefix(const StateDict& hf, const std::string& prefix, const std::string& source) {
  StateDict out;
  for (const auto& [name, t] : hf) {
    const std::string bare = name.rfind(prefix, 0) == 0 ? name.substr(prefix.size()) : name;
    if (out.contains(bare))
      throw FormatError(source + ": tensor " + printable(bare) + " is there both with and without " + printable(prefix));
    out.insert(bare, t);
  }
  return out;
}

StateDict map_hf_tensors(const StateDict& hf, const std::vector<HfTensor>& table, const std::string& source) {
  std::unordered_set<std::string> known;
  for (const HfTensor& t : table) known.insert(t.hf_name);
  for (const auto& [name, t] : hf)
    if (!known.count(name))
      throw FormatError(source + ": unexpected tensor " + printable(name) + " of shape " + shape_str(t.shape()) +
                        " (not part of a model of this config.json)");
  StateDict out;
  for (const HfTensor& e : table) {
    const Tensor* t = hf.find(e.hf_name);
    const Shape want = file_shape(e);
    if (!t) throw FormatError(source + ": missing tensor " + printable(e.hf_name) + " of shape " + shape_str(want));
    if (t->shape() != want)
      throw FormatError(source + ": tensor " + printable(e.hf_name) + " has shape " + shape_str(t->shape()) +
                        ", config.json makes it " + shape_str(want));
    if (t->dtype() != DType::float32)
      throw FormatError(source + ": tensor " + printable(e.hf_name) + " has dtype " + dtype_name(t->dtype()) +
                        "; tapegrad reads Hugging Face weights stored as F32, F16 or BF16");
    out.insert(e.name, e.transposed ? t->transpose(0, 1).contiguous() : *t);
  }
  return out;
}

StateDict unmap_hf_tensors(const StateDict& state, const std::vector<HfTensor>& table) {
  StateDict out;
  for (const HfTensor& e : table) {
    const Tensor* t = state.find(e.name);
    if (!t || t->shape() != e.shape)
      throw ValueError("save_hf: the model has no tensor " + printable(e.name) + " of shape " + shape_str(e.shape));
    // The folders written here hold F32: a float64 model would lose half its digits without a
    // word, so it is refused, naming the fix (bfloat16 widens to F32 exactly).
    if (t->dtype() == DType::float64)
      throw DTypeError("save_hf: " + printable(e.name) + " is float64, and Hugging Face folders are written as F32 here, "
                       "which would round every weight; convert a copy first (model.to(DType::float32)) to export it");
    const Tensor f = t->to(DType::float32);
    out.insert(e.hf_name, e.transposed ? f.transpose(0, 1).contiguous() : f.contiguous());
  }
  return out;
}

nn::TransformerLMConfig validated_hf_config(const nn::TransformerLMConfig& c, const std::string& source) {
  try {
    c.validate();
  } catch (const Error& e) {
    throw FormatError(source + ": the config does not make a model: " + e.what());
  }
  return c;
}

void check_tied_head(const StateDict& hf, const std::string& head, const std::string& embedding,
                     const std::string& source) {
  const Tensor* h = hf.find(head);
  if (!h) return;
  const Tensor* e = hf.find(embedding);
  if (!e || e->shape() != h->shape() || e->dtype() != h->dtype() || e->to_vector<float>() != h->to_vector<float>())
    throw FormatError(source + ": the head is tied to the embedding, but " + printable(head) + " is not " +
                      printable(embedding));
}

void refuse_stream_without_hf(const nn::TransformerLMConfig& c, const std::string& op) {
  const nn::StreamInfo& s = nn::stream_info(c.stream.scheme);
  if (s.hf_equivalent) return;
  throw ValueError(op + ": the model's stream scheme is " + s.name + " (" + s.label + ", " + s.paper +
                   "), which Hugging Face's models have no equivalent of: their blocks each read the one before it, "
                   "and the file would load into another model. Save it with io::save_model instead");
}

nn::TransformerLMConfig with_eval_neutral_settings(nn::TransformerLMConfig preset, const nn::TransformerLMConfig& model) {
  preset.block.dropout = model.block.dropout;
  preset.block.attn_dropout = model.block.attn_dropout;
  preset.block.dtype = model.block.dtype;
  preset.block.causal = model.block.causal;
  preset.init = model.init;
  preset.b2t_scaling = model.b2t_scaling;
  return preset;
}

std::shared_ptr<nn::TransformerLM> make_hf_model(const nn::TransformerLMConfig& config, const StateDict& state) {
  auto model = std::make_shared<nn::TransformerLM>(config);  // built only once every tensor is checked
  load_state_dict(*model, state);
  model->eval();
  return model;
}

void save_hf_folder(const std::string& dir, const std::string& config_json, const StateDict& hf) {
  write_file_atomic(dir + "/config.json", config_json);
  save_safetensors(hf, dir + "/model.safetensors", {{"format", "pt"}});
}

}  // namespace tapegrad::io
