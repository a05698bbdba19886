// hf_tensors.cpp — renaming, checking and transposing Hugging Face tensors (hf_tensors.hpp).
#include "hf_tensors.hpp"

#include <unordered_set>

#include "errors.hpp"
#include "names.hpp"

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
    const Tensor f = t->to(DType::float32);
    out.insert(e.hf_name, e.transposed ? f.transpose(0, 1).contiguous() : f.contiguous());
  }
  return out;
}

}  // namespace tapegrad::io
