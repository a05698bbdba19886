// metrics_log.cpp — the CSV (its resume cut: step_file.hpp) and the smoothed loss.
#include "metrics_log.hpp"

#include "../io/errors.hpp"
#include "step_file.hpp"

namespace tapegrad::training {

namespace {

const char* kSmoothed = "log.smoothed_loss";

}  // namespace

MetricsLog::MetricsLog(const std::string& path, std::int64_t resume_step) {
  if (!path.empty()) file_ = open_step_file(path, header(), resume_step, "metrics log", "--log");
}

double MetricsLog::add(std::int64_t step, double loss, double val_loss, double lr, double grad_norm) {
  smoothed_ = std::isnan(smoothed_) ? loss : 0.95 * smoothed_ + 0.05 * loss;
  if (file_.is_open())
    file_ << step << ',' << csv_number(loss) << ',' << csv_number(smoothed_) << ','
          << (std::isnan(val_loss) ? "" : csv_number(val_loss)) << ',' << csv_number(lr) << ',' << csv_number(grad_norm) << '\n';
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
