// env_switch.hpp — internal: an on/off setting read from an environment variable.
//
// Unset or empty: the default. "1": on. "0": off. Anything else throws ValueError naming the
// variable, what 1 turns on and the value: not a silent default for "yes" or "true", since
// whoever set it meant something. Used for TAPEGRAD_HUGE_PAGES (storage.cpp) and
// TAPEGRAD_GEMM_ROW_BANDS (blas.cpp), each read once where it is first needed.
#pragma once

#include <cstdlib>
#include <string>
#include <string_view>

#include "errors.hpp"

namespace tapegrad::detail {

inline bool env_switch(const char* name, bool unset, const char* what_1_turns_on) {
  const char* env = std::getenv(name);
  const std::string_view value = env ? env : "";
  if (value.empty()) return unset;
  if (value == "1") return true;
  if (value == "0") return false;
  throw ValueError(std::string(name) + " must be 1 (" + what_1_turns_on + ") or 0 (off), got \"" + std::string(value) +
                   "\"");
}

}  // namespace tapegrad::detail
