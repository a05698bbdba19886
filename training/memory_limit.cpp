// memory_limit.cpp — available_memory_bytes and parse_memory_size.
#include "memory_limit.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <fstream>
#include <stdexcept>
#include <utility>
#include <vector>

namespace tapegrad::training {

namespace {

// The first number in a file ("max" or missing: nullopt).
std::optional<double> read_number(const char* path) {
  std::ifstream in(path);
  std::string word;
  if (!(in >> word) || word == "max") return std::nullopt;
  try {
    return std::stod(word);
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

}  // namespace

double available_memory_bytes() {
  double available = 0;
  std::ifstream meminfo("/proc/meminfo");
  std::string key;
  double kib = 0;
  std::string unit;
  while (meminfo >> key >> kib >> unit)
    if (key == "MemAvailable:") {
      available = kib * 1024;
      break;
    }
  const auto limit = read_number("/sys/fs/cgroup/memory.max");
  if (limit) {
    const double used = read_number("/sys/fs/cgroup/memory.current").value_or(0);
    const double left = std::max(*limit - used, 0.0);
    available = available > 0 ? std::min(available, left) : left;
  }
  return available;
}

std::optional<double> parse_memory_size(const std::string& text) {
  const std::string t = lower(text);
  if (t == "none" || t == "off") return std::nullopt;
  const auto bad = [&] {
    return std::invalid_argument("must be a size such as 20GB, 512MB or 1.5GiB (0 or none: no limit), got '" + text + "'");
  };
  std::size_t used = 0;
  double value = 0;
  try {
    value = std::stod(t, &used);
  } catch (const std::exception&) {
    throw bad();
  }
  if (!std::isfinite(value) || value < 0 || t.find_first_of("xp") < used) throw bad();  // no hex, inf, nan
  std::string unit = t.substr(used);
  unit.erase(0, unit.find_first_not_of(' '));
  static const std::vector<std::pair<std::string, double>> units = {
      {"", 1},          {"b", 1},          {"kb", 1e3},        {"mb", 1e6},         {"gb", 1e9},
      {"tb", 1e12},     {"kib", 1024.0},   {"mib", 1048576.0}, {"gib", 1073741824.0}, {"tib", 1099511627776.0}};
  for (const auto& [name, scale] : units)
    if (unit == name) {
      if (value == 0) return std::nullopt;
      return value * scale;
    }
  throw bad();
}

}  // namespace tapegrad::training
