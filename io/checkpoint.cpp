// checkpoint.cpp — the Checkpoint container, format detection, the checks run before saving,
// and the file-level save/load functions. The two codecs are checkpoint_binary.cpp and
// checkpoint_json.cpp.
#include "checkpoint.hpp"

#include <algorithm>
#include <unordered_set>

#include "../autograd/grad_mode.hpp"
#include "codec.hpp"
#include "file.hpp"
#include "json.hpp"
#include "names.hpp"

namespace tapegrad::io {

// ---------------------------------------------------------------- Checkpoint

StateDict& Checkpoint::section(const std::string& name) {
  for (auto& [n, s] : sections)
    if (n == name) return s;
  sections.emplace_back(name, StateDict());
  return sections.back().second;
}

const StateDict* Checkpoint::find_section(const std::string& name) const {
  for (const auto& [n, s] : sections)
    if (n == name) return &s;
  return nullptr;
}

void Checkpoint::set(const std::string& key, MetaValue value) {
  for (auto& [k, v] : metadata)
    if (k == key) {
      v = std::move(value);
      return;
    }
  metadata.emplace_back(key, std::move(value));
}

const MetaValue* Checkpoint::find(const std::string& key) const {
  for (const auto& [k, v] : metadata)
    if (k == key) return &v;
  return nullptr;
}

namespace {

template <typename T>
const T& get_typed(const Checkpoint& c, const std::string& key, const char* type) {
  const MetaValue* v = c.find(key);
  if (!v) throw FormatError("checkpoint (kind " + printable(c.kind) + ") has no metadata " + printable(key));
  if (!std::holds_alternative<T>(*v))
    throw FormatError("checkpoint metadata " + printable(key) + " is not " + type);
  return std::get<T>(*v);
}

}  // namespace

std::int64_t Checkpoint::get_int(const std::string& key) const {
  return get_typed<std::int64_t>(*this, key, "an integer");
}
double Checkpoint::get_double(const std::string& key) const {
  return get_typed<double>(*this, key, "a real number");
}
const std::string& Checkpoint::get_string(const std::string& key) const {
  return get_typed<std::string>(*this, key, "a string");
}

// ---------------------------------------------------------------- shared helpers

namespace detail {

std::uint8_t dtype_code(DType dtype) {
  switch (dtype) {
    case DType::float32: return 0;
    case DType::float64: return 1;
    case DType::int64: return 2;
    default: throw DTypeError(std::string("save: dtype ") + dtype_name(dtype) + " cannot be stored yet");
  }
}

bool dtype_from_code(std::uint64_t code, DType& dtype) {
  switch (code) {
    case 0: dtype = DType::float32; return true;
    case 1: dtype = DType::float64; return true;
    case 2: dtype = DType::int64; return true;
    default: return false;
  }
}

std::int64_t checked_numel(const Shape& shape, const std::string& what) {
  if (shape.size() > kMaxDims)
    throw FormatError(what + ": " + std::to_string(shape.size()) + " dims (at most " + std::to_string(kMaxDims) + ")");
  std::int64_t bound = 1;  // product of max(dim, 1): bounds every stride
  bool empty = false;
  for (std::int64_t d : shape) {
    if (d < 0) throw FormatError(what + ": negative dim in shape " + shape_str(shape));
    if (d == 0) empty = true;
    if (d > 1 && bound > kMaxElements / d)
      throw FormatError(what + ": shape " + shape_str(shape) + " has more than 2^48 elements");
    bound *= std::max<std::int64_t>(d, 1);
  }
  return empty ? 0 : bound;
}

void check_saveable(const Checkpoint& c) {
  auto check_name = [](const std::string& name, const std::string& what) {
    const std::string problem = name_problem(name);
    if (!problem.empty()) throw ValueError("save: cannot store " + what + ": " + problem);
  };
  check_name(c.kind, "the checkpoint kind");
  if (c.metadata.size() > kMaxMetadata) throw ValueError("save: more than 65536 metadata entries");
  if (c.sections.size() > kMaxSections) throw ValueError("save: more than 1024 sections");
  std::unordered_set<std::string> seen;
  for (const auto& [key, value] : c.metadata) {
    check_name(key, "a metadata key");
    if (!seen.insert(key).second) throw ValueError("save: duplicate metadata key " + printable(key));
    if (const auto* s = std::get_if<std::string>(&value)) {
      if (!is_valid_utf8(*s)) throw ValueError("save: metadata " + printable(key) + " is not valid UTF-8");
      // cereal's JSON reader would cut the string there, so neither format stores one.
      if (s->find('\0') != std::string::npos)
        throw ValueError("save: metadata " + printable(key) + " contains a NUL character");
      if (s->size() > kMaxStringBytes) throw ValueError("save: metadata " + printable(key) + " is over 16 MiB");
    }
  }
  seen.clear();
  for (const auto& [name, state] : c.sections) {
    check_name(name, "a section name");
    if (!seen.insert(name).second) throw ValueError("save: duplicate section " + printable(name));
    if (state.size() > kMaxTensors) throw ValueError("save: section " + printable(name) + " has over 2^20 tensors");
    for (const auto& [key, t] : state) {
      check_name(key, "a tensor name in section " + printable(name));
      if (t.dtype() != DType::float32 && t.dtype() != DType::float64 && t.dtype() != DType::int64)
        throw DTypeError("save: tensor " + printable(key) + " has dtype " + dtype_name(t.dtype()) +
                         "; files hold float32, float64 and int64");
      if (t.dim() > static_cast<std::int64_t>(kMaxDims))
        throw ValueError("save: tensor " + printable(key) + " has more than 32 dims");
    }
  }
}

Tensor contiguous_values(const Tensor& t) {
  NoGradGuard no_grad;
  return t.detach().contiguous();
}

}  // namespace detail

// ---------------------------------------------------------------- encode / decode

std::string encode(const Checkpoint& checkpoint, Format format) {
  detail::check_saveable(checkpoint);
  return format == Format::json ? detail::encode_json(checkpoint) : detail::encode_binary(checkpoint);
}

Checkpoint decode(std::string_view bytes, const std::string& source) {
  if (bytes.empty()) throw FormatError(source + ": the file is empty, not a tapegrad checkpoint");
  const std::size_t n = std::min(bytes.size(), kBinaryMagic.size());
  if (bytes.substr(0, n) == kBinaryMagic.substr(0, n)) return detail::decode_binary(bytes, source);
  const std::size_t first = bytes.find_first_not_of(" \t\r\n");
  if (first != std::string_view::npos && bytes[first] == '{') return detail::decode_json(bytes, source);

  std::string head;  // the first bytes in hex, to help recognise what the file is
  static constexpr char kHex[] = "0123456789abcdef";
  for (std::size_t i = 0; i < std::min<std::size_t>(bytes.size(), 8); ++i) {
    const auto c = static_cast<unsigned char>(bytes[i]);
    head += (i ? " " : "") + std::string{kHex[c >> 4], kHex[c & 0xF]};
  }
  std::string hint;
  if (bytes.size() > 8 && bytes[8] == '{') hint = " (it looks like a safetensors file: use load_safetensors)";
  throw FormatError(source + ": not a tapegrad checkpoint: it starts with bytes " + head + ", not \"" +
                    std::string(kBinaryMagic) + "\" (binary) or '{' (JSON)" + hint);
}

// ---------------------------------------------------------------- files

void save_checkpoint(const Checkpoint& checkpoint, const std::string& path, Format format) {
  write_file_atomic(path, encode(checkpoint, format));
}

Checkpoint load_checkpoint(const std::string& path) { return decode(read_file(path), path); }

void save(const StateDict& state, const std::string& path, Format format) {
  Checkpoint c;
  c.sections.emplace_back("model", state);
  save_checkpoint(c, path, format);
}

StateDict load(const std::string& path) {
  Checkpoint c = load_checkpoint(path);
  const StateDict* model = c.find_section("model");
  if (!model)
    throw FormatError(path + ": the checkpoint (kind " + printable(c.kind) + ") has no section \"model\"");
  return *model;
}

void save_module(const nn::Module& module, const std::string& path, Format format) {
  save(state_dict(module), path, format);
}

LoadResult load_module(nn::Module& module, const std::string& path, bool strict) {
  return load_state_dict(module, load(path), strict);
}

}  // namespace tapegrad::io
