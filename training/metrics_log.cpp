// metrics_log.cpp — the CSV (its resume cut: step_file.hpp) and the smoothed loss.
#include "metrics_log.hpp"

#include "../autograd/errors.hpp"
#include "../io/errors.hpp"
#include "step_file.hpp"

namespace tapegrad::training {

namespace {

const char* kSmoothed = "log.smoothed_loss";

}  // namespace

std::string MetricsLog::cell(double v) { return std::isnan(v) ? "" : csv_number(v); }

std::string MetricsLog::header_line() const {
  std::string line = header();
  for (const std::string& c : extra_columns_) line += "," + c;
  return line;
}

MetricsLog::MetricsLog(const std::string& path, std::int64_t resume_step, std::vector<std::string> extra_columns)
    : extra_columns_(std::move(extra_columns)) {
  if (!path.empty()) file_ = open_step_file(path, header_line(), resume_step, "metrics log", "--log");
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
