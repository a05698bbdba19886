// lens.hpp — train_lm --lens: at every evaluation, the logit lens of the validation batches
// (nn/diagnostics/logit_lens.hpp; docs/residual-stream.md): the stream after each block decoded
// by the model's own final norm and head, its loss per layer and the share of tokens whose top
// prediction is already the last layer's. The lens reads the evaluation's own forward passes
// (a StreamRecorder on the model's stream during evaluate_lm), so its last layer is the validation
// loss, and no number of the run changes: train_lm.csv and the checkpoint are those of a run
// without --lens.
//
//   train_lm.lens.csv   step, layer, loss, top1_agreement: one row per layer and evaluation,
//                       beside --log (train_lm.csv -> train_lm.lens.csv; no file without --log);
//                       cut back to the checkpoint's step on --resume, as the metrics log is
#pragma once

#include <cstdint>
#include <fstream>
#include <string>
#include <vector>

#include <tapegrad/tapegrad.hpp>

namespace lm {

// --log's name with .lens.csv for .csv (empty: none).
std::string lens_path(const std::string& log);

class LensLog {
 public:
  // path: the CSV (empty: none); resume_step < 0 for a new run.
  LensLog(const std::string& path, std::int64_t resume_step);
  // One evaluation's lens: its rows in the file, and a line for the log:
  //   logit lens at step 200 (val loss by layer; top-1 agreement with layer 4): 0: 4.19 (2%)  1: 3.02 (31%) ...
  std::string add(std::int64_t step, const std::vector<tapegrad::nn::LensLayer>& layers);

 private:
  std::ofstream file_;
};

}  // namespace lm
