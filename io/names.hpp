// names.hpp — the rules for tensor, section and metadata names in files, and a safe way to
// show untrusted text in error messages.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace tapegrad::io {

// Longest name a file may hold (PyTorch's longest real names are ~100 bytes).
inline constexpr std::size_t kMaxNameBytes = 4096;

// Why `name` cannot be stored, or "" when it can. A name must be non-empty, at most
// kMaxNameBytes long, valid UTF-8 and free of control characters (bytes below 0x20, 0x7F).
std::string name_problem(std::string_view name);

// s in double quotes for an error message: control and non-ASCII bytes as \xNN, cut after
// 80 bytes ("...") so that a hostile file cannot flood the message.
std::string printable(std::string_view s);

}  // namespace tapegrad::io
