// hf_config.hpp — a Hugging Face config.json (transformers' PretrainedConfig.to_json_file):
// typed, checked access to its fields for the importers (hf_gpt2.hpp, hf_llama.hpp), and the
// writer the exporters use.
//
// Reading: every accessor names the file and the field in its FormatError ("config.json:
// \"n_embd\" must be a positive integer, got \"32.5\""). Fields tapegrad does not use (dropout
// rates, token ids, task heads) are ignored, as transformers ignores unknown ones.
// Writing: the text of Python's json.dumps(config, indent=2, sort_keys=True) + "\n", which is
// what PretrainedConfig.to_json_file writes (it sorts keys), so a file tapegrad wrote and
// re-reads is written back byte for byte.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>

#include "json.hpp"

namespace tapegrad::io {

class HfConfig {
 public:
  // The text of a config.json; `source` names it in errors. Throws FormatError.
  static HfConfig parse(std::string_view text, const std::string& source);
  static HfConfig load(const std::string& path);

  const std::string& source() const { return source_; }
  // Whether the field is present and not null.
  bool has(std::string_view key) const;
  // A required integer in [1, 2^31): model sizes.
  std::int64_t size(std::string_view key) const;
  std::int64_t size_or(std::string_view key, std::int64_t fallback) const;
  // A finite positive number (epsilons, RoPE's base).
  double positive_number_or(std::string_view key, double fallback) const;
  std::string string_or(std::string_view key, const std::string& fallback) const;
  bool boolean_or(std::string_view key, bool fallback) const;

 private:
  const json::Value* field(std::string_view key) const;
  json::Value root_;
  std::string source_;
};

// Builds a config.json: each value is stored as its JSON text; text() sorts the keys.
class HfConfigWriter {
 public:
  HfConfigWriter& integer(const std::string& key, std::int64_t value);
  HfConfigWriter& number(const std::string& key, double value);  // as Python's repr(float)
  HfConfigWriter& string(const std::string& key, const std::string& value);
  HfConfigWriter& boolean(const std::string& key, bool value);
  HfConfigWriter& string_list(const std::string& key, const std::string& value);  // ["value"]
  std::string text() const;

 private:
  std::map<std::string, std::string> fields_;  // sorted, as sort_keys=True
};

// Python's repr(float): the shortest digits that read back to the same double, in fixed
// notation for exponents -4..15 ("0.0001", "10000.0") and as "1e-05" / "1e+16" otherwise.
std::string python_float_repr(double value);

}  // namespace tapegrad::io
