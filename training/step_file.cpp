// step_file.cpp — the resume cut of step_file.hpp, and its numbers.
#include "step_file.hpp"

#include <cstdio>
#include <filesystem>
#include <sstream>

#include "../io/errors.hpp"
#include "../io/file.hpp"

namespace tapegrad::training {

namespace {

// The file's header and its rows of steps 1..step, for a run resumed at step.
std::string rows_up_to(const std::string& path, const std::string& header, std::int64_t step, const std::string& what,
                       const std::string& flag) {
  std::istringstream in(io::read_file(path));
  std::string line, kept;
  if (!std::getline(in, line) || line != header)
    throw io::FormatError(path + ": not a " + what + " of this run (first line '" + line + "', expected '" + header +
                          "'); move it away or name another " + flag + " to resume");
  kept = line + "\n";
  while (std::getline(in, line)) {
    std::int64_t row_step = 0;
    if (std::sscanf(line.c_str(), "%lld", reinterpret_cast<long long*>(&row_step)) != 1) break;
    if (row_step > step) break;
    kept += line + "\n";
  }
  return kept;
}

}  // namespace

std::string csv_number(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6g", v);
  return buf;
}

std::ofstream open_step_file(const std::string& path, const std::string& header, std::int64_t resume_step,
                             const std::string& what, const std::string& flag) {
  std::ofstream file;
  if (resume_step >= 0 && std::filesystem::exists(path)) {
    io::write_file_atomic(path, rows_up_to(path, header, resume_step, what, flag));
    file.open(path, std::ios::app);
  } else {
    file.open(path, std::ios::trunc);
    file << header << '\n';
  }
  if (!file) throw io::IoError("cannot write the " + what + " " + path);
  return file;
}

}  // namespace tapegrad::training
