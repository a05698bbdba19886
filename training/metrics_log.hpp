// metrics_log.hpp — a run's metrics as CSV, one row per step, continued exactly by a resumed
// run: the file of a run stopped at step k and resumed equals the file of a straight run,
// byte for byte.
//
//   step,loss,smoothed_loss,val_loss,lr,grad_norm
//   1,4.4721,4.4721,,3e-05,1.98
//
// smoothed_loss is an exponential moving average, s_t = 0.95·s_{t−1} + 0.05·loss_t (s_1 =
// loss_1); its value travels in the checkpoint (state()/restore()), so a resumed run goes on
// from it. val_loss is empty where the run did not evaluate. Only quantities that do not
// depend on the machine are logged (tokens/s is on the progress line, and in a file of its own
// for train_lm's live report): that is what lets two runs compare byte for byte. A run may add
// columns of its own after these (train_lm: val_loss_ema with --ema, skipped with a spike
// guard), the same for the run's whole life. On resume at step k the file is cut back to its
// rows of steps 1..k (a run killed after its last checkpoint had logged more), then appended
// to (step_file.hpp).
#pragma once

#include <cmath>
#include <cstdint>
#include <fstream>
#include <string>
#include <vector>

#include "../io/model_config.hpp"

namespace tapegrad::training {

class MetricsLog {
 public:
  // path empty: no file (a process that does not log, as the ranks but 0 of a data-parallel run).
  // resume_step < 0: a new run (the file is replaced); else a resumed run at that step.
  // extra_columns: the names of columns after the standard ones.
  MetricsLog(const std::string& path, std::int64_t resume_step, std::vector<std::string> extra_columns = {});

  // Logs step (1-based) and returns the smoothed loss after it. val_loss: NaN when not evaluated.
  // extra: one cell per extra column (text as it is written; ValueError for another count).
  double add(std::int64_t step, double loss, double val_loss, double lr, double grad_norm,
             const std::vector<std::string>& extra = {});
  double smoothed() const { return smoothed_; }
  void flush();

  // What a checkpoint carries so that a resumed run continues the smoothed loss.
  io::Metadata state() const;
  void restore(const io::Metadata& extra);

  static const char* header() { return "step,loss,smoothed_loss,val_loss,lr,grad_norm"; }
  // This log's first line: header() and the extra columns.
  std::string header_line() const;
  // A number as the log writes it: six significant digits, as C's %g (empty for NaN).
  static std::string cell(double v);

 private:
  std::vector<std::string> extra_columns_;
  std::ofstream file_;
  double smoothed_ = NAN;
};

}  // namespace tapegrad::training
