// name_list.hpp — "a, b, c or d": the names of a registry's entries (anything with a `name`
// member), for --help and for the errors that list what a setting may be.
#pragma once

#include <string>

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

}  // namespace tapegrad::nn
