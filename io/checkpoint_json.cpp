// checkpoint_json.cpp — the JSON checkpoint codec, through cereal's JSON archives:
//
//   {"magic": "tapegrad-checkpoint", "version": 1, "kind": "state_dict",
//    "metadata": [{"key": "step", "type": "int64", "value": 3}, ...],
//    "sections": [{"name": "model", "tensors": [
//        {"name": "0.weight", "dtype": "float32", "shape": [2, 3], "crc32": 1234, "data": [...]}]}]}
//
// Values round-trip exactly: float64 as the shortest decimal that reads back to the same
// double, float32 as the shortest one for the float when that survives the trip through
// double (else the float's exact double value). NaN/Infinity are written as NaN, Infinity,
// -Infinity (NaN payloads and signs are not kept). "crc32" is the CRC-32 of the tensor's
// little-endian bytes as they load; after editing a value by hand, put in the CRC the load
// error reports. Before cereal sees the text, a SAX pass of rapidjson checks the syntax and
// caps the nesting depth (cereal's DOM parser recurses once per level).
#include <cereal/archives/json.hpp>
// after cereal's json.hpp, which configures rapidjson (asserts throw, NaN allowed)
#include <rapidjson/encodedstream.h>
#include <rapidjson/error/en.h>
#include <rapidjson/memorystream.h>
#include <rapidjson/reader.h>

#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <sstream>

#include "checksum.hpp"
#include "codec.hpp"
#include "names.hpp"

namespace tapegrad::io::detail {

namespace {

constexpr int kMaxJsonDepth = 8;  // our documents nest 6 deep (root, sections, a section, tensors, a tensor, data)

const char* meta_type_name(const MetaValue& v) {
  return std::holds_alternative<std::int64_t>(v) ? "int64" : std::holds_alternative<double>(v) ? "float64" : "string";
}

// The double written for a float: its shortest decimal if that reads back as the same float.
double json_value_of(float f) {
  if (!std::isfinite(f)) return static_cast<double>(f);
  char buf[64];
  const auto end = std::to_chars(buf, buf + sizeof buf, f).ptr;
  *end = '\0';
  const double d = std::strtod(buf, nullptr);
  // The shortest decimal of FLT_MAX (3.4028235e+38) is above FLT_MAX as a double: keep
  // every written value within the float range, which the reader checks.
  const bool in_range = std::abs(d) <= std::numeric_limits<float>::max();
  return in_range && static_cast<float>(d) == f ? d : static_cast<double>(f);
}

// What a written value becomes after loading (the checksum is over that): NaN -> quiet NaN.
template <typename T>
T as_loaded(T v) {
  if constexpr (std::is_floating_point_v<T>)
    if (std::isnan(v)) return static_cast<T>(std::numeric_limits<double>::quiet_NaN());
  return v;
}

using JsonWriter = cereal::JSONOutputArchive;
using JsonReader = cereal::JSONInputArchive;

void write_tensor(JsonWriter& ar, const std::string& name, const Tensor& t) {
  ar.startNode();
  ar(cereal::make_nvp("name", name));
  ar(cereal::make_nvp("dtype", std::string(dtype_name(t.dtype()))));
  ar.setNextName("shape");
  ar.startNode();
  ar.makeArray();
  for (std::int64_t d : t.shape()) ar(d);
  ar.finishNode();
  const Tensor values = contiguous_values(t);
  dispatch_all(values.dtype(), "save", [&]<typename T>() {
    const T* p = values.data<T>();
    const auto n = static_cast<std::size_t>(values.numel());
    std::uint32_t crc = 0;
    for (std::size_t i = 0; i < n; ++i) {
      const T loaded = as_loaded(p[i]);
      crc = crc32_update(crc, &loaded, sizeof loaded);
    }
    ar(cereal::make_nvp("crc32", crc));
    ar.setNextName("data");
    ar.startNode();
    ar.makeArray();
    for (std::size_t i = 0; i < n; ++i) {
      if constexpr (std::is_same_v<T, float>) ar(json_value_of(p[i]));
      else ar(p[i]);
    }
    ar.finishNode();
  });
  ar.finishNode();
}

// Rejects what cereal's parser should never see: bad syntax, deep nesting, NUL in strings.
struct SyntaxCheck : rapidjson::BaseReaderHandler<rapidjson::UTF8<>, SyntaxCheck> {
  int depth = 0;
  std::string problem;
  bool enter() {
    if (++depth <= kMaxJsonDepth) return true;
    problem = "nested deeper than " + std::to_string(kMaxJsonDepth) + " levels";
    return false;
  }
  bool StartObject() { return enter(); }
  bool StartArray() { return enter(); }
  bool EndObject(rapidjson::SizeType) { --depth; return true; }
  bool EndArray(rapidjson::SizeType) { --depth; return true; }
  bool String(const char* s, rapidjson::SizeType n, bool) {
    if (std::memchr(s, 0, n) == nullptr) return true;
    problem = "a string contains a NUL character";
    return false;
  }
  bool Key(const char* s, rapidjson::SizeType n, bool copy) { return String(s, n, copy); }
};

void check_syntax(std::string_view bytes, const std::string& source) {
  // rapidjson's memory stream reads a NUL as the end of the text: refuse raw NULs outright.
  if (const void* nul = std::memchr(bytes.data(), 0, bytes.size()))
    throw FormatError(source + ": invalid JSON: a NUL byte at byte " +
                      std::to_string(static_cast<const char*>(nul) - bytes.data()));
  rapidjson::MemoryStream memory(bytes.data(), bytes.size());
  rapidjson::EncodedInputStream<rapidjson::UTF8<>, rapidjson::MemoryStream> in(memory);
  SyntaxCheck handler;
  rapidjson::Reader reader;
  constexpr unsigned kFlags = rapidjson::kParseIterativeFlag | rapidjson::kParseValidateEncodingFlag |
                              rapidjson::kParseFullPrecisionFlag | rapidjson::kParseNanAndInfFlag;
  const rapidjson::ParseResult result = reader.Parse<kFlags>(in, handler);
  if (result) return;
  const std::string why = handler.problem.empty() ? rapidjson::GetParseError_En(result.Code()) : handler.problem;
  throw FormatError(source + ": invalid JSON at byte " + std::to_string(result.Offset()) + ": " + why);
}

// Enters the array member `name` and returns its length (finishNode() leaves it).
std::uint64_t enter_array(JsonReader& ar, const char* name) {
  ar.setNextName(name);
  ar.startNode();
  cereal::size_type n = 0;
  ar.loadSize(n);
  return n;
}

Tensor read_tensor(JsonReader& ar, const std::string& source, const std::string& name) {
  const std::string what = "tensor " + printable(name);
  auto fail = [&](const std::string& why) -> void { throw FormatError(source + ": " + what + " " + why); };
  std::string dtype_text;
  ar(cereal::make_nvp("dtype", dtype_text));
  DType dtype{};
  if (dtype_text == "float32") dtype = DType::float32;
  else if (dtype_text == "float64") dtype = DType::float64;
  else if (dtype_text == "int64") dtype = DType::int64;
  else fail("has unknown dtype " + printable(dtype_text));
  const std::uint64_t ndim = enter_array(ar, "shape");
  if (ndim > kMaxDims) fail("has " + std::to_string(ndim) + " dims (at most 32)");
  Shape shape(ndim);
  for (auto& d : shape) ar(d);
  ar.finishNode();
  const std::int64_t numel = checked_numel(shape, source + ": " + what);
  std::uint32_t stored_crc = 0;
  ar(cereal::make_nvp("crc32", stored_crc));
  const std::uint64_t count = enter_array(ar, "data");
  if (count != static_cast<std::uint64_t>(numel))  // before the allocation
    fail("of shape " + shape_str(shape) + " needs " + std::to_string(numel) + " values, \"data\" has " +
         std::to_string(count));
  Tensor t = Tensor::empty(shape, dtype);
  dispatch_all(dtype, "load", [&]<typename T>() {
    T* p = t.data<T>();
    for (std::int64_t i = 0; i < numel; ++i) {
      if constexpr (std::is_same_v<T, float>) {
        double d = 0;
        ar(d);
        if (std::isfinite(d) && std::abs(d) > std::numeric_limits<float>::max()) {
          char value[32];
          std::snprintf(value, sizeof value, "%.9g", d);
          fail("has value " + std::string(value) + " outside the float32 range");
        }
        p[i] = static_cast<float>(d);
      } else {
        ar(p[i]);
      }
    }
  });
  ar.finishNode();
  const std::uint32_t crc = crc32_update(0, t.raw_data(), static_cast<std::size_t>(numel) * size_of(dtype));
  if (crc != stored_crc)
    fail("is corrupted: checksum mismatch (stored crc32 " + std::to_string(stored_crc) + ", computed " +
         std::to_string(crc) + ")");
  return t;
}

std::string read_name(JsonReader& ar, const char* member, const std::string& source, const std::string& what) {
  std::string name;
  ar(cereal::make_nvp(member, name));
  const std::string problem = name_problem(name);
  if (!problem.empty()) throw FormatError(source + ": " + what + ": " + problem);
  return name;
}

Checkpoint read_document(JsonReader& ar, const std::string& source, std::string& where) {
  Checkpoint c;
  where = "\"magic\"";
  std::string magic;
  ar(cereal::make_nvp("magic", magic));
  if (magic != kJsonMagic)
    throw FormatError(source + ": wrong magic " + printable(magic) + ", expected \"" + std::string(kJsonMagic) + "\"");
  where = "\"version\"";
  std::uint64_t version = 0;
  ar(cereal::make_nvp("version", version));
  if (version > kFormatVersion)
    throw FormatError(source + ": format version " + std::to_string(version) +
                      " is newer than this build of tapegrad reads (up to version " +
                      std::to_string(kFormatVersion) + "); upgrade tapegrad to load it");
  if (version == 0) throw FormatError(source + ": invalid format version 0");
  where = "\"kind\"";
  c.kind = read_name(ar, "kind", source, "the checkpoint kind");

  where = "\"metadata\"";
  const std::uint64_t n_meta = enter_array(ar, "metadata");
  if (n_meta > kMaxMetadata) throw FormatError(source + ": more than 65536 metadata entries");
  for (std::uint64_t i = 0; i < n_meta; ++i) {
    where = "metadata entry " + std::to_string(i);
    ar.startNode();
    std::string key = read_name(ar, "key", source, "a metadata key");
    if (c.find(key)) throw FormatError(source + ": duplicate metadata key " + printable(key));
    std::string type;
    ar(cereal::make_nvp("type", type));
    if (type == "int64") {
      std::int64_t v = 0;
      ar(cereal::make_nvp("value", v));
      c.metadata.emplace_back(key, v);
    } else if (type == "float64") {
      double v = 0;
      ar(cereal::make_nvp("value", v));
      c.metadata.emplace_back(key, v);
    } else if (type == "string") {
      std::string v;
      ar(cereal::make_nvp("value", v));
      c.metadata.emplace_back(key, std::move(v));
    } else {
      throw FormatError(source + ": metadata " + printable(key) + " has unknown type " + printable(type));
    }
    ar.finishNode();
  }
  ar.finishNode();

  where = "\"sections\"";
  const std::uint64_t n_sections = enter_array(ar, "sections");
  if (n_sections > kMaxSections) throw FormatError(source + ": more than 1024 sections");
  for (std::uint64_t s = 0; s < n_sections; ++s) {
    where = "section " + std::to_string(s);
    ar.startNode();
    std::string section = read_name(ar, "name", source, "a section name");
    if (c.find_section(section)) throw FormatError(source + ": duplicate section " + printable(section));
    StateDict& state = c.section(section);
    const std::uint64_t n_tensors = enter_array(ar, "tensors");
    if (n_tensors > kMaxTensors) throw FormatError(source + ": section " + printable(section) + " has over 2^20 tensors");
    for (std::uint64_t i = 0; i < n_tensors; ++i) {
      where = "tensor " + std::to_string(i) + " of section " + printable(section);
      ar.startNode();
      std::string name = read_name(ar, "name", source, "a tensor name in section " + printable(section));
      if (state.contains(name))
        throw FormatError(source + ": duplicate tensor " + printable(name) + " in section " + printable(section));
      where = "tensor " + printable(name);
      Tensor t = read_tensor(ar, source, name);
      state.insert(std::move(name), std::move(t));
      ar.finishNode();
    }
    ar.finishNode();
    ar.finishNode();
  }
  ar.finishNode();
  return c;
}

}  // namespace

std::string encode_json(const Checkpoint& c) {
  std::ostringstream out;
  {
    JsonWriter ar(out);  // pretty-printed; the closing brace is written when ar goes away
    ar(cereal::make_nvp("magic", std::string(kJsonMagic)));
    ar(cereal::make_nvp("version", kFormatVersion));
    ar(cereal::make_nvp("kind", c.kind));
    ar.setNextName("metadata");
    ar.startNode();
    ar.makeArray();
    for (const auto& [key, value] : c.metadata) {
      ar.startNode();
      ar(cereal::make_nvp("key", key));
      ar(cereal::make_nvp("type", std::string(meta_type_name(value))));
      std::visit([&](const auto& v) { ar(cereal::make_nvp("value", v)); }, value);
      ar.finishNode();
    }
    ar.finishNode();
    ar.setNextName("sections");
    ar.startNode();
    ar.makeArray();
    for (const auto& [name, state] : c.sections) {
      ar.startNode();
      ar(cereal::make_nvp("name", name));
      ar.setNextName("tensors");
      ar.startNode();
      ar.makeArray();
      for (const auto& [key, t] : state) write_tensor(ar, key, t);
      ar.finishNode();
      ar.finishNode();
    }
    ar.finishNode();
  }
  out << '\n';
  return std::move(out).str();
}

Checkpoint decode_json(std::string_view bytes, const std::string& source) {
  check_syntax(bytes, source);
  std::string where = "the document";
  try {
    MemoryBuffer buf(bytes);
    std::istream in(&buf);
    JsonReader ar(in);
    return read_document(ar, source, where);
  } catch (const cereal::Exception& e) {
    throw FormatError(source + ": malformed JSON checkpoint at " + where + ": " + e.what());
  }
}

}  // namespace tapegrad::io::detail
