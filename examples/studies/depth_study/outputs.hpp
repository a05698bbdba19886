// outputs.hpp — what a depth-study run writes into --out: report.md (the setup, tables and
// chart links), the CSV files holding every measured number in long format, and SVG charts.
// Every file is written atomically: an interrupted run leaves no half-written file.
#pragma once

#include <string>
#include <vector>

#include "runs.hpp"
#include "settings.hpp"

namespace depth_study {

// One (init, variant, depth): its snapshot at initialization and, for the trained inits, its
// training and the snapshot after it (absent when the loss became non-finite).
struct RunRecord {
  std::string init;
  const Variant* variant = nullptr;
  std::int64_t depth = 0, parameters = 0;
  Snapshot at_init;
  bool trained = false;
  TrainResult train;
  bool has_after = false;
  Snapshot after;
};

struct SweepRecord {
  std::string init;
  const Variant* variant = nullptr;
  std::int64_t depth = 0;
  double lr = 0;
  TrainResult train;
};

// What the report says about the data and the machine.
struct SetupInfo {
  std::string command;        // the command line, quoted for a POSIX shell
  std::string data;           // "3 file(s), 123456 bytes: /usr/share/..., ..."
  std::string tokenizer;      // "char" or "bpe"
  std::int64_t vocab_size = 0, train_tokens = 0, val_tokens = 0;
  // Cross-entropy of the train split's unigram model (add-one smoothed) on the train split,
  // the whole val split and the validation batches: what a model blind to context reaches.
  double unigram_train = 0, unigram_val_split = 0, unigram_validation = 0;
  int threads = 0;
  std::string load_start, load_end;  // /proc/loadavg at the start and at the end
  double seconds = 0;         // the whole run
};

// A CSV file: its name and columns. The first `text_columns` hold words, the rest numbers;
// a row whose `status` is "non-finite" may hold NaN or Inf, every other row only finite numbers.
struct CsvSpec {
  std::string file;
  std::vector<std::string> columns;
  std::size_t text_columns = 0;
};
const std::vector<CsvSpec>& csv_specs();

// Writes everything into dir (created when missing); returns the names of the files written.
std::vector<std::string> write_outputs(const std::string& dir, const Settings& settings, const SetupInfo& info,
                                       const std::vector<RunRecord>& runs, const std::vector<SweepRecord>& sweep);

}  // namespace depth_study

namespace depth_study {

// ---- shared by outputs.cpp (which writes the files) and report_md.cpp (which links them)

// "at initialization" or "after 300 steps".
std::string stage_label(const std::string& stage, std::int64_t steps);
// The chart files: per-layer metric ("grad_norm", "rms", "cosine") of one init, depth and
// stage ("init", "trained"); and the charts that span the depths.
std::string layer_chart_file(const std::string& metric, const std::string& init, std::int64_t depth, const std::string& stage);
std::string ratio_chart_file(const std::string& init, const std::string& stage);
std::string loss_chart_file(const std::string& init, std::int64_t depth);
std::string val_loss_chart_file(const std::string& init);
std::string sweep_chart_file(const std::string& init);

// The runs of one init and depth, in the order of --placements.
std::vector<const RunRecord*> select(const std::vector<RunRecord>& runs, const std::string& init, std::int64_t depth);
// ‖∇θ_1‖ / ‖∇θ_L‖: below 1, the bottom block gets less gradient than the top one.
double bottom_to_top_ratio(const Snapshot& s);

// report.md's text (report_md.cpp).
std::string report_markdown(const Settings& settings, const SetupInfo& info, const std::vector<RunRecord>& runs,
                            const std::vector<SweepRecord>& sweep);

}  // namespace depth_study
