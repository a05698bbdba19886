// history.hpp — what train_lm's live report draws: the run's measurements over its steps, the
// whole run's, also after --resume. A resumed process starts from what the files hold of the
// steps before it, each cut back to the checkpoint's step as the metrics log is
// (training/step_file.hpp), then adds its own steps:
//
//   train_lm.csv         step, loss, smoothed_loss, val_loss, lr, grad_norm: the metrics log,
//                        written by training::MetricsLog, only read here
//   train_lm.blocks.csv  step, block_0, block_1, ...: each block's gradient norm. Deterministic,
//                        as the metrics log: a stopped and resumed run writes a straight run's
//                        file, byte for byte. Kept out of train_lm.csv so that the metrics log's
//                        columns do not depend on the model's depth.
//   train_lm.speed.csv   step, tokens_per_s: the machine's speed. Kept out of train_lm.csv,
//                        which two runs compare byte for byte, and out of the checkpoint (a
//                        resumed run would not equal a straight one).
// The page is drawn from memory, never from the files: they are read once, at the start.
#pragma once

#include <cstdint>
#include <fstream>
#include <string>
#include <vector>

namespace lm {

// One measurement over the steps: (x, y) pairs in step order.
struct Curve {
  std::vector<double> x, y;
  void add(double step, double value) { x.push_back(step), y.push_back(value); }
};

class History {
 public:
  // resume_step < 0: a new run (the side files are replaced); else the run resumed at that step.
  // log: the metrics log (empty: none), already cut back by the MetricsLog of this process;
  // blocks, speed: the side files above, for a model of n_blocks blocks.
  History(const std::string& log, const std::string& blocks, const std::string& speed, std::int64_t resume_step,
          std::int64_t n_blocks);

  // A step's metrics, as the metrics log has them (val_loss NaN: not evaluated); in memory only.
  void add_metrics(std::int64_t step, double loss, double smoothed, double val_loss, double lr, double grad_norm);
  // Each block's gradient norm, and the tokens per second: in memory and in their files.
  void add_block_norms(std::int64_t step, const std::vector<double>& norms);
  void add_speed(std::int64_t step, double tokens_per_s);
  void flush();

  Curve loss, smoothed, val_loss, lr, grad_norm, tokens_per_s;
  std::vector<Curve> block_norms;  // [block]

 private:
  std::ofstream blocks_file_, speed_file_;
};

}  // namespace lm
