// progress.cpp — Progress and the clock.
#include "progress.hpp"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <unistd.h>

namespace tapegrad::training {

std::string clock_str(double seconds) {
  char buf[32];
  const long t = std::lround(std::max(seconds, 0.0));
  std::snprintf(buf, sizeof buf, "%ld:%02ld", t / 60, t % 60);
  return buf;
}

std::string load_average() {
  std::ifstream in("/proc/loadavg");
  std::string a, b, c;
  return in >> a >> b >> c ? a + " " + b + " " + c : "unknown";
}

Progress::Progress(double total_work, std::FILE* stream)
    : total(total_work), stream_(stream), tty_(isatty(fileno(stream))), start_(std::chrono::steady_clock::now()),
      last_show_(start_) {}

double Progress::elapsed() const {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
}

std::string Progress::eta() const { return done > 0 ? clock_str(elapsed() * (total - done) / done) : "?"; }

std::string Progress::timing() const {
  return clock_str(elapsed()) + " (m:ss); load average (1, 5, 15 min) " + load_at_start + " at the start, " +
         load_average() + " at the end";
}

void Progress::show(const std::string& what) {
  const auto now = std::chrono::steady_clock::now();
  if (tty_) {
    if (now - last_show_ < std::chrono::milliseconds(200)) return;
  } else if (log_every > 0) {
    if (done - last_logged_ < log_every) return;
    last_logged_ = done;
  } else if (now - last_show_ < std::chrono::seconds(10)) {
    return;
  }
  last_show_ = now;
  print(what, !tty_);
}

void Progress::line(const std::string& what) { print(what, true); }

void Progress::note(const std::string& what) {
  std::fprintf(stream_, "%s%s\n", tty_ ? "\r\033[K" : "", what.c_str());
  std::fflush(stream_);
}

void Progress::print(const std::string& what, bool newline) {
  const double percent = total > 0 ? 100 * done / total : 100;
  std::fprintf(stream_, "%s[%3.0f%%] %s  elapsed %s  ETA %s%s", tty_ ? "\r\033[K" : "", percent, what.c_str(),
               clock_str(elapsed()).c_str(), eta().c_str(), newline ? "\n" : "");
  std::fflush(stream_);
}

}  // namespace tapegrad::training
