// name_list.hpp — what every registry (placements, norms, stream schemes) does by name: find
// an entry, list the names ("a, b, c or d") for --help and for the errors that say what a
// setting may be, and take a program's own entry. An entry is anything with a `name` member.
#pragma once

#include <string>
#include <utility>

#include "../autograd/errors.hpp"

namespace tapegrad::nn {

// The names of the entries e for which keep(e) is true.
template <typename Entries, typename Keep>
std::string name_list_if(const Entries& entries, Keep&& keep, const std::string& last_separator = " or ") {
  std::string names, pending;  // the last name kept so far waits for the separator before it
  for (const auto& e : entries) {
    if (!keep(e)) continue;
    if (!pending.empty()) names += (names.empty() ? "" : ", ") + pending;
    pending = e.name;
  }
  if (pending.empty()) return names;
  return names.empty() ? pending : names + last_separator + pending;
}

template <typename Entries>
std::string name_list(const Entries& entries, const std::string& last_separator = " or ") {
  return name_list_if(entries, [](const auto&) { return true; }, last_separator);
}

// The entry called name; ValueError "unknown <what> 'x' (expected a, b or c)" otherwise.
template <typename Entries>
const auto& entry_named(const Entries& entries, const std::string& name, const std::string& what) {
  for (const auto& e : entries)
    if (e.name == name) return e;
  throw ValueError("unknown " + what + " '" + name + "' (expected " + name_list(entries) + ")");
}

// Appends a program's own entry (register_placement, register_stream); ValueError from `op`
// when its name is empty or taken, or it has no make function.
template <typename Registry, typename Entry>
void register_entry(Registry& registry, Entry entry, const std::string& op, const std::string& what) {
  if (entry.name.empty() || !entry.make)
    throw ValueError(op + ": a " + what + " needs a name and a make function (got name '" + entry.name + "')");
  for (const auto& e : registry)
    if (e.name == entry.name) throw ValueError(op + ": a " + what + " named '" + entry.name + "' is already registered");
  registry.push_back(std::move(entry));
}

}  // namespace tapegrad::nn
