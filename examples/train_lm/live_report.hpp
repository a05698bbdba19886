// live_report.hpp — train_lm --report FILE (default: beside --log, train_lm.csv -> train_lm.html):
// what a run measures for its live report, and when the page is written. Run calls it at
// three points of a step; rank 0 alone keeps it (the other ranks of --ddp have none).
//
//   measure(step, model)   after backward (and the gradients' averaging), before clipping: each
//                          block's gradient norm, at the steps due()
//   add(step, result, s)   after the step: its metrics, the seconds its update took; after an
//                          evaluation, the page is written
//   write()                with each checkpoint: the page, and the side files flushed
//
// Measurements are taken every --eval-interval / 10 steps (at least every step) and at every
// evaluation: a per-block norm costs a pass over the gradients, cheap beside a step, but not
// needed at every step to draw a curve. The page is drawn from History (history.hpp says which
// files keep what across --resume, and why tokens/s is not in train_lm.csv); it is written
// atomically (io::write_file_atomic), so a browser never reads half a page.
#pragma once

#include <cstdint>
#include <string>

#include <tapegrad/tapegrad.hpp>

#include "history.hpp"
#include "options.hpp"
#include "report_page.hpp"

namespace lm {

struct StepResult;

// The page's path: --report, or else --log's with .html for .csv (empty: no report).
std::string report_path(const Options& options);

class LiveReport {
 public:
  // path: the page (its side files beside it: FILE.html -> FILE.blocks.csv, FILE.speed.csv);
  // resume_step < 0 for a new run. s: the settings after any --resume took the checkpoint's.
  LiveReport(const std::string& path, const Settings& s, const tapegrad::nn::TransformerLM& model,
             std::int64_t resume_step, double baseline);

  bool due(std::int64_t step) const;
  void measure(std::int64_t step, const tapegrad::nn::TransformerLM& model);
  void add(std::int64_t step, const StepResult& r, double update_seconds);
  void write();

 private:
  std::string path_;
  const Settings& s_;
  std::int64_t every_;           // steps between measurements
  std::int64_t tokens_per_step_;  // B × T, of all processes together
  History history_;
  PageFacts facts_;
  double seconds_ = 0;      // of the updates since the last tokens/s
  std::int64_t steps_ = 0;  // ... and their number
};

}  // namespace lm
