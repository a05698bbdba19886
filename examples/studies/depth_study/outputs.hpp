// outputs.hpp — what a depth-study run writes into --out: report.html and report.md (the
// claims and their verdicts, claims.hpp), the CSV files holding every measured number in long
// format, and the SVG charts the reports show. Every file is written atomically: an
// interrupted run leaves no half-written file.
#pragma once

#include <string>
#include <vector>

#include "stages.hpp"

namespace depth_study {

// A CSV file: its name and columns. The first `text_columns` and the last
// `trailing_text_columns` hold words, the rest numbers; a row whose `outcome` is "diverged" may
// hold NaN or Inf, every other row only finite numbers (or empty cells where nothing was
// measured). New columns go at the end, so that readers of the older columns by position
// (cut -f1-14 in the tests) keep working.
struct CsvSpec {
  std::string file;
  std::vector<std::string> columns;
  std::size_t text_columns = 0;
  std::size_t trailing_text_columns = 0;
};
const std::vector<CsvSpec>& csv_specs();

// Writes everything into dir (created when missing); returns the names of the files written.
std::vector<std::string> write_outputs(const std::string& dir, const Settings& settings, const Results& results);

}  // namespace depth_study
