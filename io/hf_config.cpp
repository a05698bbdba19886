// hf_config.cpp — typed reading and Python-compatible writing of Hugging Face config.json.
#include "hf_config.hpp"

#include <charconv>
#include <cmath>

#include "errors.hpp"
#include "file.hpp"
#include "names.hpp"

namespace tapegrad::io {

namespace {
constexpr std::uint64_t kMaxSize = std::uint64_t{1} << 31;  // no model dim is larger; keeps products in 64 bits
}

HfConfig HfConfig::parse(std::string_view text, const std::string& source) {
  HfConfig c;
  c.source_ = source;
  c.root_ = json::parse(text, source, {.max_depth = 8});
  if (c.root_.kind != json::Value::Kind::object)
    throw FormatError(source + ": a config.json holds a JSON object, got " + json::kind_name(c.root_.kind));
  return c;
}

HfConfig HfConfig::load(const std::string& path) { return parse(read_file(path), path); }

const json::Value* HfConfig::field(std::string_view key) const {
  const json::Value* v = root_.find(key);
  return (v && v->kind != json::Value::Kind::null) ? v : nullptr;
}

bool HfConfig::has(std::string_view key) const { return field(key) != nullptr; }

std::int64_t HfConfig::size(std::string_view key) const {
  const json::Value* v = field(key);
  const std::string what = source_ + ": " + printable(key);
  if (!v) throw FormatError(what + " is missing (a required field)");
  if (v->kind != json::Value::Kind::number)
    throw FormatError(what + " must be a positive integer, got " + json::kind_name(v->kind));
  std::uint64_t n = 0;
  try {
    n = json::to_uint64(*v, what);
  } catch (const FormatError&) {
    throw FormatError(what + " must be a positive integer, got " + printable(v->text));
  }
  if (n == 0 || n >= kMaxSize) throw FormatError(what + " must be in [1, 2^31), got " + v->text);
  return static_cast<std::int64_t>(n);
}

std::int64_t HfConfig::size_or(std::string_view key, std::int64_t fallback) const {
  return has(key) ? size(key) : fallback;
}

double HfConfig::positive_number_or(std::string_view key, double fallback) const {
  const json::Value* v = field(key);
  if (!v) return fallback;
  const std::string what = source_ + ": " + printable(key);
  if (v->kind != json::Value::Kind::number)
    throw FormatError(what + " must be a positive number, got " + json::kind_name(v->kind));
  double x = 0;
  const char* end = v->text.data() + v->text.size();
  const auto [ptr, ec] = std::from_chars(v->text.data(), end, x);
  if (ec != std::errc() || ptr != end || !std::isfinite(x) || !(x > 0))
    throw FormatError(what + " must be a finite positive number, got " + printable(v->text));
  return x;
}

std::string HfConfig::string_or(std::string_view key, const std::string& fallback) const {
  const json::Value* v = field(key);
  if (!v) return fallback;
  if (v->kind != json::Value::Kind::string)
    throw FormatError(source_ + ": " + printable(key) + " must be a string, got " + json::kind_name(v->kind));
  return v->text;
}

bool HfConfig::boolean_or(std::string_view key, bool fallback) const {
  const json::Value* v = field(key);
  if (!v) return fallback;
  if (v->kind != json::Value::Kind::boolean)
    throw FormatError(source_ + ": " + printable(key) + " must be true or false, got " + json::kind_name(v->kind));
  return v->boolean;
}

std::string python_float_repr(double value) {
  if (std::isnan(value)) return "NaN";
  if (std::isinf(value)) return value > 0 ? "Infinity" : "-Infinity";  // json.dumps' spellings
  char buf[64];
  // The shortest round-trip digits, as d.ddde±XX; then laid out by repr's rule.
  const auto res = std::to_chars(buf, buf + sizeof buf, value, std::chars_format::scientific);
  std::string sci(buf, res.ptr);
  std::string sign;
  if (sci[0] == '-') sign = "-", sci.erase(0, 1);
  const std::size_t e = sci.find('e');
  const int exp = std::stoi(sci.substr(e + 1));
  std::string digits = sci.substr(0, e);
  if (digits.size() > 1) digits.erase(1, 1);  // drop the '.'
  const int n = static_cast<int>(digits.size());
  if (exp < -4 || exp >= 16) {
    std::string out = sign + digits.substr(0, 1);
    if (n > 1) out += "." + digits.substr(1);
    const int a = exp < 0 ? -exp : exp;
    return out + (exp < 0 ? "e-" : "e+") + (a < 10 ? "0" : "") + std::to_string(a);
  }
  if (exp < 0) return sign + "0." + std::string(static_cast<std::size_t>(-exp - 1), '0') + digits;
  if (n <= exp + 1) return sign + digits + std::string(static_cast<std::size_t>(exp + 1 - n), '0') + ".0";
  return sign + digits.substr(0, static_cast<std::size_t>(exp + 1)) + "." + digits.substr(static_cast<std::size_t>(exp + 1));
}

HfConfigWriter& HfConfigWriter::integer(const std::string& key, std::int64_t value) {
  fields_[key] = std::to_string(value);
  return *this;
}
HfConfigWriter& HfConfigWriter::number(const std::string& key, double value) {
  fields_[key] = python_float_repr(value);
  return *this;
}
HfConfigWriter& HfConfigWriter::string(const std::string& key, const std::string& value) {
  fields_[key] = json::quote(value);
  return *this;
}
HfConfigWriter& HfConfigWriter::boolean(const std::string& key, bool value) {
  fields_[key] = value ? "true" : "false";
  return *this;
}
HfConfigWriter& HfConfigWriter::string_list(const std::string& key, const std::string& value) {
  fields_[key] = "[\n    " + json::quote(value) + "\n  ]";  // json.dumps(indent=2) of a nested list
  return *this;
}

std::string HfConfigWriter::text() const {
  std::string out = "{";
  bool first = true;
  for (const auto& [key, value] : fields_) {
    out += (first ? "\n  " : ",\n  ") + json::quote(key) + ": " + value;
    first = false;
  }
  return out + "\n}\n";
}

}  // namespace tapegrad::io
