// spike_guard.cpp — the z-score windows and the skip decision.
#include "spike_guard.hpp"

#include <cmath>
#include <cstdio>
#include <sstream>

#include "../autograd/errors.hpp"

namespace tapegrad::training {

ZScoreWindow::ZScoreWindow(std::size_t size) : size_(size) {
  if (size < 2) throw ValueError("ZScoreWindow: a window needs at least 2 values, got " + std::to_string(size));
}

double ZScoreWindow::mean() const {
  double sum = 0;
  for (const double v : values_) sum += v;
  return sum / static_cast<double>(values_.size());
}

double ZScoreWindow::stddev() const {
  const double m = mean();
  double sum_sq = 0;
  for (const double v : values_) sum_sq += (v - m) * (v - m);
  return std::sqrt(sum_sq / static_cast<double>(values_.size()));
}

double ZScoreWindow::push(double x) {
  double z = NAN;
  if (full()) {
    const double m = mean(), s = stddev();
    z = s > 0 ? (x - m) / s : x == m ? 0.0 : x > m ? INFINITY : -INFINITY;
    values_.pop_front();
  }
  values_.push_back(x);
  return z;
}

void ZScoreWindow::restore(std::deque<double> values) {
  if (values.size() > size_)
    throw ValueError("ZScoreWindow: " + std::to_string(values.size()) + " saved values for a window of " +
                     std::to_string(size_));
  values_ = std::move(values);
}

SpikeGuard::SpikeGuard(const SpikeGuardOptions& options)
    : options_(options), loss_(options.window), grad_norm_(options.window) {
  if (options.loss_z < 0 || options.grad_norm_z < 0)
    throw ValueError("SpikeGuard: thresholds must be positive (0: off), got loss " + std::to_string(options.loss_z) +
                     ", grad_norm " + std::to_string(options.grad_norm_z));
}

namespace {

std::string explain(const char* what, double x, double z, std::size_t n, double threshold, double mean, double sd) {
  char buf[256];
  std::snprintf(buf, sizeof buf,
                "%s %.4g is %.3g standard deviations above the mean %.4g (std %.3g) of the last %zu steps (threshold %g)",
                what, x, z, mean, sd, n, threshold);
  return buf;
}

}  // namespace

std::string SpikeGuard::judge(double loss, double grad_norm) {
  last_skip_.clear();
  // mean and spread before the values join their windows (for the message)
  const bool ready = loss_.full();
  const double loss_mean = ready ? loss_.mean() : NAN, loss_sd = ready ? loss_.stddev() : NAN;
  const double norm_mean = ready ? grad_norm_.mean() : NAN, norm_sd = ready ? grad_norm_.stddev() : NAN;
  const double z_loss = loss_.push(loss), z_norm = grad_norm_.push(grad_norm);
  if (options_.loss_z > 0 && z_loss > options_.loss_z) {
    last_skip_ = "loss";
    return explain("loss", loss, z_loss, options_.window, options_.loss_z, loss_mean, loss_sd);
  }
  if (options_.grad_norm_z > 0 && z_norm > options_.grad_norm_z) {
    last_skip_ = "grad_norm";
    return explain("gradient norm", grad_norm, z_norm, options_.window, options_.grad_norm_z, norm_mean, norm_sd);
  }
  return "";
}

namespace {

// Values as C99 hex floats ("0x1.8p+1"), exact, separated by spaces.
std::string hex_list(const std::deque<double>& values) {
  std::string out;
  char buf[40];
  for (const double v : values) {
    std::snprintf(buf, sizeof buf, "%a", v);
    out += (out.empty() ? "" : " ") + std::string(buf);
  }
  return out;
}

std::deque<double> parse_hex_list(const std::string& text, const std::string& key) {
  std::deque<double> out;
  std::istringstream in(text);
  std::string word;
  while (in >> word) {
    char* end = nullptr;
    const double v = std::strtod(word.c_str(), &end);
    if (end != word.c_str() + word.size()) throw io::FormatError("the checkpoint's " + key + " holds '" + word + "', not a number");
    out.push_back(v);
  }
  return out;
}

const char* kLossKey = "spike.loss";
const char* kNormKey = "spike.grad_norm";

}  // namespace

io::Metadata SpikeGuard::state() const {
  if (!on()) return {};
  return {{kLossKey, hex_list(loss_.values())}, {kNormKey, hex_list(grad_norm_.values())}};
}

void SpikeGuard::restore(const io::Metadata& extra) {
  for (const auto& [key, value] : extra) {
    if (key != kLossKey && key != kNormKey) continue;
    const std::string* text = std::get_if<std::string>(&value);
    if (!text) throw io::FormatError("the checkpoint's " + key + " is not text");
    (key == kLossKey ? loss_ : grad_norm_).restore(parse_hex_list(*text, key));
  }
}

}  // namespace tapegrad::training
