// cli_checks.hpp — the checks of a number on the command line, with messages a person reads:
//
//   app.add_option("--seq-len", seq_len, "tokens per sequence")->check(cli::positive);
//   $ train_lm --seq-len 0
//   --seq-len: must be a positive number, got 0
//
// CLI11's own PositiveNumber says "Value 0 not in range 0.000000 to 1797693134862315708145274..."
// (it prints the largest double in full). These say what is wanted, and what was given.
// Header-only, for the programs (examples/, bench/); the library does not use CLI11.
#pragma once

#include <CLI/CLI.hpp>

#include <cmath>
#include <cstdio>
#include <string>

namespace cli {

namespace detail {

// The number in text, or NaN when it is not one.
inline double parse_number(const std::string& text) {
  try {
    std::size_t used = 0;
    const double value = std::stod(text, &used);
    return used == text.size() ? value : NAN;
  } catch (const std::exception&) {
    return NAN;
  }
}

inline std::string fmt(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%g", value);
  return text;
}

// A validator that accepts a number for which `ok` holds; "must be <wanted>, got <text>".
template <typename Ok>
CLI::Validator number(const std::string& wanted, Ok ok) {
  return CLI::Validator(
      [wanted, ok](std::string& text) -> std::string {
        const double value = parse_number(text);
        if (std::isnan(value)) return "must be a number (" + wanted + "), got '" + text + "'";
        return ok(value) ? std::string() : "must be " + wanted + ", got " + text;
      },
      wanted, "");
}

}  // namespace detail

// > 0.
inline const CLI::Validator positive = detail::number("a positive number", [](double v) { return v > 0; });
// >= 0.
inline const CLI::Validator non_negative = detail::number("0 or more", [](double v) { return v >= 0; });
// In [low, high].
inline CLI::Validator range(double low, double high) {
  return detail::number("between " + detail::fmt(low) + " and " + detail::fmt(high),
                        [low, high](double v) { return v >= low && v <= high; });
}

// In [low, high).
inline CLI::Validator below(double low, double high) {
  return detail::number("at least " + detail::fmt(low) + " and below " + detail::fmt(high),
                        [low, high](double v) { return v >= low && v < high; });
}

}  // namespace cli
