// safetensors.cpp — safetensors writer and strict reader (header parsed by io/json.hpp).
#include "safetensors.hpp"

#include <algorithm>
#include <cstring>
#include <unordered_set>

#include "codec.hpp"
#include "file.hpp"
#include "half.hpp"
#include "json.hpp"
#include "names.hpp"

namespace tapegrad::io {

namespace {

constexpr std::uint64_t kMaxHeaderBytes = 16u << 20;
constexpr const char* kMetadataKey = "__metadata__";

const char* safetensors_dtype(DType dtype) {
  switch (dtype) {
    case DType::float32: return "F32";
    case DType::float64: return "F64";
    case DType::int64: return "I64";
    default: return nullptr;
  }
}

// A tensor entry of the header, validated, before any allocation.
struct Entry {
  std::string name;
  DType dtype{};              // of the tensor tapegrad makes
  std::size_t file_bytes = 0;  // per element in the file: size_of(dtype), or 2 for F16/BF16
  bool bf16 = false, f16 = false;
  Shape shape;
  std::uint64_t begin = 0, end = 0;
};

Entry parse_entry(const std::string& name, const json::Value& info, std::uint64_t data_size, const std::string& source) {
  const std::string what = source + ": tensor " + printable(name);
  if (info.kind != json::Value::Kind::object)
    throw FormatError(what + " must be an object, got " + json::kind_name(info.kind));
  Entry e;
  e.name = name;
  const json::Value *dtype = nullptr, *shape = nullptr, *offsets = nullptr;
  for (std::size_t i = 0; i < info.keys.size(); ++i) {
    const std::string& key = info.keys[i];
    const json::Value& value = info.items[i];
    if (key == "dtype") dtype = &value;
    else if (key == "shape") shape = &value;
    else if (key == "data_offsets") offsets = &value;
    else throw FormatError(what + " has an unknown field " + printable(key));
  }
  if (!dtype || !shape || !offsets) throw FormatError(what + " needs \"dtype\", \"shape\" and \"data_offsets\"");

  if (dtype->kind != json::Value::Kind::string) throw FormatError(what + ": \"dtype\" must be a string");
  if (dtype->text == "F32") e.dtype = DType::float32;
  else if (dtype->text == "F64") e.dtype = DType::float64;
  else if (dtype->text == "I64") e.dtype = DType::int64;
  else if (dtype->text == "F16") e.dtype = DType::float32, e.f16 = true;
  else if (dtype->text == "BF16") e.dtype = DType::float32, e.bf16 = true;
  else
    throw FormatError(what + " has dtype " + printable(dtype->text) + "; tapegrad reads F32, F64, I64, F16 and BF16");
  e.file_bytes = (e.f16 || e.bf16) ? 2 : size_of(e.dtype);

  if (shape->kind != json::Value::Kind::array) throw FormatError(what + ": \"shape\" must be an array");
  if (shape->items.size() > detail::kMaxDims) throw FormatError(what + " has more than 32 dims");
  for (const auto& d : shape->items) {
    const std::uint64_t dim = json::to_uint64(d, what + ": a dim");
    if (dim > static_cast<std::uint64_t>(detail::kMaxElements))
      throw FormatError(what + " has a dim of " + std::to_string(dim));
    e.shape.push_back(static_cast<std::int64_t>(dim));
  }
  const std::int64_t numel = detail::checked_numel(e.shape, what);

  if (offsets->kind != json::Value::Kind::array || offsets->items.size() != 2)
    throw FormatError(what + ": \"data_offsets\" must be [begin, end]");
  e.begin = json::to_uint64(offsets->items[0], what + ": data_offsets[0]");
  e.end = json::to_uint64(offsets->items[1], what + ": data_offsets[1]");
  if (e.begin > e.end || e.end > data_size)
    throw FormatError(what + " has data_offsets [" + std::to_string(e.begin) + ", " + std::to_string(e.end) +
                      "] outside the " + std::to_string(data_size) + " data bytes");
  const std::uint64_t nbytes = static_cast<std::uint64_t>(numel) * e.file_bytes;  // <= 2^51
  if (e.end - e.begin != nbytes)
    throw FormatError(what + " of shape " + shape_str(e.shape) + " and dtype " + dtype->text + " needs " +
                      std::to_string(nbytes) + " bytes, its data_offsets span " + std::to_string(e.end - e.begin));
  return e;
}

}  // namespace

std::string encode_safetensors(const StateDict& state, const SafetensorsMetadata& metadata,
                               SafetensorsFloat float32_as) {
  std::string header = "{";
  if (!metadata.empty()) {
    header += json::quote(kMetadataKey) + ":{";
    std::unordered_set<std::string> keys;
    for (const auto& [key, value] : metadata) {
      if (!is_valid_utf8(key) || !is_valid_utf8(value))
        throw ValueError("save_safetensors: metadata " + printable(key) + " is not valid UTF-8");
      if (!keys.insert(key).second) throw ValueError("save_safetensors: duplicate metadata key " + printable(key));
      header += (keys.size() > 1 ? "," : "") + json::quote(key) + ":" + json::quote(value);
    }
    header += "},";
  }
  std::uint64_t offset = 0;
  std::vector<Tensor> values;
  for (const auto& [name, t] : state) {
    const std::string problem = name_problem(name);
    if (!problem.empty()) throw ValueError("save_safetensors: cannot store a tensor name: " + problem);
    if (name == kMetadataKey) throw ValueError("save_safetensors: \"__metadata__\" is reserved, not a tensor name");
    const char* dtype = safetensors_dtype(t.dtype());
    if (!dtype)
      throw DTypeError("save_safetensors: tensor " + printable(name) + " has dtype " + dtype_name(t.dtype()) +
                       "; tapegrad writes float32, float64 and int64");
    const bool narrow = t.dtype() == DType::float32 && float32_as != SafetensorsFloat::f32;
    if (narrow) dtype = float32_as == SafetensorsFloat::f16 ? "F16" : "BF16";
    values.push_back(detail::contiguous_values(t));
    const std::uint64_t nbytes = static_cast<std::uint64_t>(t.numel()) * (narrow ? 2 : size_of(t.dtype()));
    std::string dims;
    for (std::int64_t d : t.shape()) dims += (dims.empty() ? "" : ",") + std::to_string(d);
    header += json::quote(name) + ":{\"dtype\":\"" + dtype + "\",\"shape\":[" + dims + "],\"data_offsets\":[" +
              std::to_string(offset) + "," + std::to_string(offset + nbytes) + "]},";
    offset += nbytes;
  }
  if (header.back() == ',') header.pop_back();
  header += "}";
  header.append((8 - header.size() % 8) % 8, ' ');  // the data starts 8-byte aligned

  const std::uint64_t header_size = header.size();
  std::string bytes(8, '\0');
  std::memcpy(bytes.data(), &header_size, 8);
  bytes.reserve(8 + header.size() + offset);
  bytes += header;
  for (const Tensor& v : values) {
    if (v.dtype() == DType::float32 && float32_as != SafetensorsFloat::f32) {
      const float* x = static_cast<const float*>(v.raw_data());
      for (std::int64_t i = 0; i < v.numel(); ++i) {
        const std::uint16_t h = float32_as == SafetensorsFloat::f16 ? float_to_f16(x[i]) : float_to_bf16(x[i]);
        const char le[2] = {static_cast<char>(h & 0xff), static_cast<char>(h >> 8)};  // little-endian
        bytes.append(le, 2);
      }
      continue;
    }
    bytes.append(static_cast<const char*>(v.raw_data()), static_cast<std::size_t>(v.numel()) * size_of(v.dtype()));
  }
  return bytes;
}

SafetensorsFile decode_safetensors(std::string_view bytes, const std::string& source) {
  if (bytes.size() < 8)
    throw FormatError(source + ": truncated: " + std::to_string(bytes.size()) +
                      " bytes, a safetensors file starts with an 8-byte header length");
  std::uint64_t header_size = 0;
  std::memcpy(&header_size, bytes.data(), 8);
  if (header_size > kMaxHeaderBytes)
    throw FormatError(source + ": the header length " + std::to_string(header_size) + " is over 16 MiB" +
                      (header_size > bytes.size() ? " and past the end of the file (not a safetensors file?)" : ""));
  if (header_size > bytes.size() - 8)
    throw FormatError(source + ": truncated: the header claims " + std::to_string(header_size) + " bytes, only " +
                      std::to_string(bytes.size() - 8) + " follow");
  const std::string_view header_text = bytes.substr(8, header_size);
  if (header_text.empty() || header_text[0] != '{')
    throw FormatError(source + ": the safetensors header must start with '{'");
  const json::Value header = json::parse(header_text, source + ": safetensors header", {.max_depth = 4});
  if (header.kind != json::Value::Kind::object) throw FormatError(source + ": the header is not a JSON object");

  SafetensorsFile file;
  const std::string_view data = bytes.substr(8 + header_size);
  std::vector<Entry> entries;
  for (std::size_t i = 0; i < header.keys.size(); ++i) {
    const std::string& key = header.keys[i];
    const json::Value& value = header.items[i];
    if (key == kMetadataKey) {
      if (value.kind != json::Value::Kind::object) throw FormatError(source + ": \"__metadata__\" must be an object");
      for (std::size_t m = 0; m < value.keys.size(); ++m) {
        const std::string& k = value.keys[m];
        const json::Value& v = value.items[m];
        if (v.kind != json::Value::Kind::string)
          throw FormatError(source + ": metadata " + printable(k) + " must be a string, got " + json::kind_name(v.kind));
        file.metadata.emplace_back(k, v.text);
      }
      continue;
    }
    const std::string problem = name_problem(key);
    if (!problem.empty()) throw FormatError(source + ": bad tensor name: " + problem);
    if (entries.size() >= detail::kMaxTensors) throw FormatError(source + ": more than 2^20 tensors");
    entries.push_back(parse_entry(key, value, data.size(), source));
  }

  // The byte ranges must tile the data: sorted by begin, each starts where the last ended.
  std::stable_sort(entries.begin(), entries.end(),
                   [](const Entry& a, const Entry& b) { return a.begin != b.begin ? a.begin < b.begin : a.end < b.end; });
  std::uint64_t expected_begin = 0;
  for (const Entry& e : entries) {
    if (e.begin != expected_begin)
      throw FormatError(source + ": tensor " + printable(e.name) + " starts at data byte " + std::to_string(e.begin) +
                        ", expected " + std::to_string(expected_begin) + " (tensors must not overlap or leave gaps)");
    expected_begin = e.end;
  }
  if (expected_begin != data.size())
    throw FormatError(source + ": " + std::to_string(data.size() - expected_begin) +
                      " data bytes after the last tensor belong to no tensor");

  for (const Entry& e : entries) {  // all checked: now allocate and copy
    Tensor t = Tensor::empty(e.shape, e.dtype);
    if (e.f16 || e.bf16) {  // widen each little-endian 16-bit value exactly to float32
      const auto* src = reinterpret_cast<const unsigned char*>(data.data() + e.begin);
      float* dst = static_cast<float*>(t.raw_data());
      for (std::uint64_t i = 0; i < (e.end - e.begin) / 2; ++i) {
        const auto h = static_cast<std::uint16_t>(src[2 * i] | (src[2 * i + 1] << 8));
        dst[i] = e.f16 ? f16_to_float(h) : bf16_to_float(h);
      }
    } else {
      std::memcpy(t.raw_data(), data.data() + e.begin, e.end - e.begin);
    }
    file.tensors.insert(e.name, std::move(t));
  }
  return file;
}

void save_safetensors(const StateDict& state, const std::string& path, const SafetensorsMetadata& metadata,
                      SafetensorsFloat float32_as) {
  write_file_atomic(path, encode_safetensors(state, metadata, float32_as));
}

SafetensorsFile load_safetensors(const std::string& path) { return decode_safetensors(read_file(path), path); }

}  // namespace tapegrad::io
