// progress.hpp — a progress line with an ETA, for training runs and studies.
//
// Work is counted in units the caller picks (steps, steps × layers, ...); the ETA extrapolates
// the time per unit done so far. On a terminal show() redraws one line in place, at most 5
// times a second; in a log (a file, a pipe, mpirun's output) it writes a whole line now and
// then: every `log_every` units when set, else every 10 seconds. line() always writes, and
// ends the line: for results that stay on screen; note() prints a plain message.
//
//   training::Progress progress(steps);
//   progress.done = step;  progress.show("step 30/1000  loss 2.31");
//   // [  3%] step 30/1000  loss 2.31  elapsed 0:04  ETA 2:10
#pragma once

#include <chrono>
#include <cstdio>
#include <string>

namespace tapegrad::training {

// "m:ss" (minutes may exceed 59: "75:02").
std::string clock_str(double seconds);
// The 1-, 5- and 15-minute load averages of /proc/loadavg ("unknown" when unreadable).
std::string load_average();

class Progress {
 public:
  explicit Progress(double total_work, std::FILE* stream = stderr);
  double total = 0, done = 0;
  double log_every = 0;  // in a log: a line every this many units (0: every 10 seconds)
  std::string load_at_start = load_average();

  // Whether show() redraws in place; set off where the stream is a terminal that a log reads
  // (mpirun gives every rank a pseudo-terminal).
  void set_terminal(bool on) { tty_ = on; }
  bool terminal() const { return tty_; }
  double elapsed() const;  // seconds since construction
  std::string eta() const;  // "m:ss", "?" before any work is done
  // "4:01 (m:ss); load average (1, 5, 15 min) 1.9 1.5 1.2 at the start, 2.1 1.9 1.4 at the end"
  std::string timing() const;
  void show(const std::string& what);
  void line(const std::string& what);
  // A message on a line of its own (a checkpoint saved, ...), without the progress decoration;
  // on a terminal it first clears the line being redrawn.
  void note(const std::string& what);

 private:
  void print(const std::string& what, bool newline);
  std::FILE* stream_;
  bool tty_;
  std::chrono::steady_clock::time_point start_, last_show_;
  double last_logged_ = 0;  // work done at the last line written to a log
};

}  // namespace tapegrad::training
