// metrics_log.cpp — the CSV, its resume cut, and the smoothed loss.
#include "metrics_log.hpp"

#include <cstdio>
#include <filesystem>
#include <sstream>

#include "../autograd/errors.hpp"
#include "../io/file.hpp"

namespace tapegrad::training {

namespace {

const char* kSmoothed = "log.smoothed_loss";

// The file's header and its rows of steps 1..step, for a run resumed at step.
std::string rows_up_to(const std::string& path, std::int64_t step, const std::string& header) {
  std::istringstream in(io::read_file(path));
  std::string line, kept;
  if (!std::getline(in, line) || line != header)
    throw io::FormatError(path + ": not a metrics log of this run (first line '" + line + "', expected '" + header +
                          "'); move it away or name another --log to resume");
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

// Six significant digits, as C's %g: the same number always prints the same way.
std::string MetricsLog::cell(double v) {
  if (std::isnan(v)) return "";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6g", v);
  return buf;
}

std::string MetricsLog::header_line() const {
  std::string line = header();
  for (const std::string& c : extra_columns_) line += "," + c;
  return line;
}

MetricsLog::MetricsLog(const std::string& path, std::int64_t resume_step, std::vector<std::string> extra_columns)
    : extra_columns_(std::move(extra_columns)) {
  if (path.empty()) return;
  if (resume_step >= 0 && std::filesystem::exists(path)) {
    io::write_file_atomic(path, rows_up_to(path, resume_step, header_line()));
    file_.open(path, std::ios::app);
  } else {
    file_.open(path, std::ios::trunc);
    file_ << header_line() << '\n';
  }
  if (!file_) throw io::IoError("cannot write the metrics log " + path);
}

double MetricsLog::add(std::int64_t step, double loss, double val_loss, double lr, double grad_norm,
                       const std::vector<std::string>& extra) {
  if (extra.size() != extra_columns_.size())
    throw ValueError("MetricsLog::add: " + std::to_string(extra.size()) + " extra cells for the " +
                     std::to_string(extra_columns_.size()) + " extra columns of '" + header_line() + "'");
  smoothed_ = std::isnan(smoothed_) ? loss : 0.95 * smoothed_ + 0.05 * loss;
  if (file_.is_open()) {
    file_ << step << ',' << cell(loss) << ',' << cell(smoothed_) << ',' << cell(val_loss) << ',' << cell(lr) << ','
          << cell(grad_norm);
    for (const std::string& c : extra) file_ << ',' << c;
    file_ << '\n';
  }
  return smoothed_;
}

void MetricsLog::flush() {
  if (file_.is_open()) file_.flush();
}

io::Metadata MetricsLog::state() const {
  if (std::isnan(smoothed_)) return {};
  return {{kSmoothed, smoothed_}};
}

void MetricsLog::restore(const io::Metadata& extra) {
  for (const auto& [key, value] : extra)
    if (key == kSmoothed) {
      const double* v = std::get_if<double>(&value);
      if (!v) throw io::FormatError(std::string("metrics log: the checkpoint's ") + kSmoothed + " is not a number");
      smoothed_ = *v;
    }
}

}  // namespace tapegrad::training
