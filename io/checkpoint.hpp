// checkpoint.hpp — tapegrad's own file format: a versioned container of named tensor sections
// plus a small ordered metadata map, written through cereal as a compact portable binary
// archive (the default) or a JSON archive (human-readable, for inspection and teaching).
//
//   io::save_module(model, "model.tgc");               // section "model" = state_dict(model)
//   io::load_module(model, "model.tgc");               // strict by default
//   io::save(io::state_dict(model), "model.json", io::Format::json);
//
// A Checkpoint is what a training checkpoint is built from: kind "training", sections
// "model", "optimizer", ..., metadata "step" = 1200, "lr" = 3e-4, "rng.state" = ... Both
// formats hold exactly the same information. docs/checkpoint-format.md gives the byte layout
// and the versioning rule (a reader refuses files of a newer version). Loaders treat files as
// untrusted: every size is checked against the bytes that remain before anything is
// allocated, and the binary payload carries a CRC-32. Bad input throws FormatError.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "errors.hpp"
#include "state_dict.hpp"

namespace tapegrad::io {

enum class Format : std::uint8_t { binary, json };

// The 8 bytes a binary checkpoint starts with, and the "magic" member of a JSON one.
inline constexpr std::string_view kBinaryMagic = "TAPEGRAD";
inline constexpr std::string_view kJsonMagic = "tapegrad-checkpoint";
// The format version this build writes, and the newest it reads (it reads 1..kFormatVersion).
inline constexpr std::uint32_t kFormatVersion = 1;

// A metadata value: an integer, a real number or a UTF-8 string (without NUL characters).
using MetaValue = std::variant<std::int64_t, double, std::string>;

struct Checkpoint {
  std::string kind = "state_dict";  // what the file is: "state_dict", later "training", ...
  std::vector<std::pair<std::string, MetaValue>> metadata;  // ordered, unique keys
  std::vector<std::pair<std::string, StateDict>> sections;  // ordered, unique names

  // The section called name; appended empty if there is none yet.
  StateDict& section(const std::string& name);
  // The section called name, or nullptr.
  const StateDict* find_section(const std::string& name) const;

  // Sets a metadata entry (replacing the value of an existing key, keeping its position).
  void set(const std::string& key, MetaValue value);
  // The metadata entry for key, or nullptr.
  const MetaValue* find(const std::string& key) const;
  // Typed reads; FormatError when the key is absent or holds another type.
  std::int64_t get_int(const std::string& key) const;
  double get_double(const std::string& key) const;
  const std::string& get_string(const std::string& key) const;
};

// The bytes of a checkpoint file. Saving never modifies the checkpoint or its tensors.
// Throws ValueError for a name that cannot be stored (empty, not UTF-8, control characters,
// duplicate section or metadata key) and DTypeError for a dtype files do not hold (bfloat16).
std::string encode(const Checkpoint& checkpoint, Format format = Format::binary);
// Reads bytes produced by encode, detecting the format from the first bytes. `source` names
// the input in error messages (a path). Throws FormatError.
Checkpoint decode(std::string_view bytes, const std::string& source = "<memory>");

// encode + write_file_atomic, and read_file + decode (IoError for the file system's errors).
void save_checkpoint(const Checkpoint& checkpoint, const std::string& path, Format format = Format::binary);
Checkpoint load_checkpoint(const std::string& path);

// A state dict alone: a checkpoint of kind "state_dict" with one section, "model".
void save(const StateDict& state, const std::string& path, Format format = Format::binary);
// The "model" section of any checkpoint (a state dict file or a training checkpoint).
StateDict load(const std::string& path);

// save(state_dict(module), path) and load_state_dict(module, load(path), strict).
void save_module(const nn::Module& module, const std::string& path, Format format = Format::binary);
LoadResult load_module(nn::Module& module, const std::string& path, bool strict = true);

}  // namespace tapegrad::io

namespace tapegrad {
using io::load_module;
using io::save_module;
}  // namespace tapegrad
