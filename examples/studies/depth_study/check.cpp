// check.cpp — --check: the outputs as a reader would find them on disk.
#include "check.hpp"

#include <cmath>
#include <sstream>

#include "common/study.hpp"
#include <tapegrad/io/file.hpp>

#include "outputs.hpp"

namespace depth_study {

namespace {

// The files hold no quoted cells (names and statuses have no commas): a plain split will do.
std::vector<std::string> split(const std::string& line) {
  std::vector<std::string> cells;
  std::stringstream in(line);
  for (std::string cell; std::getline(in, cell, ',');) cells.push_back(cell);
  if (!line.empty() && line.back() == ',') cells.emplace_back();
  return cells;
}

bool parse_number(const std::string& text, double& value) {
  std::size_t used = 0;
  try {
    value = std::stod(text, &used);  // reads "nan" and "inf" too
  } catch (const std::exception&) {
    return false;
  }
  return used == text.size();
}

void check_csv(const std::string& dir, const CsvSpec& spec, std::vector<std::string>& problems,
               std::vector<std::vector<std::string>>& rows) {
  const std::string path = dir + "/" + spec.file;
  std::stringstream in(tapegrad::io::read_file(path));
  std::string line;
  std::getline(in, line);
  if (split(line) != spec.columns) {
    problems.push_back(path + ": header is '" + line + "'");
    return;
  }
  const std::size_t status_column = std::find(spec.columns.begin(), spec.columns.end(), "status") - spec.columns.begin();
  for (int n = 2; std::getline(in, line); ++n) {
    const std::vector<std::string> cells = split(line);
    if (cells.size() != spec.columns.size()) {
      problems.push_back(path + " line " + std::to_string(n) + ": " + std::to_string(cells.size()) + " cells");
      continue;
    }
    const bool may_be_non_finite = status_column < cells.size() && cells[status_column] == "diverged";
    for (std::size_t c = spec.text_columns; c + spec.trailing_text_columns < cells.size(); ++c) {
      double v = 0;
      if (cells[c].empty()) continue;  // not measured for this run
      if (!parse_number(cells[c], v)) problems.push_back(path + " line " + std::to_string(n) + ": " + spec.columns[c] + " = '" + cells[c] + "' is not a number");
      else if (!std::isfinite(v) && !may_be_non_finite)
        problems.push_back(path + " line " + std::to_string(n) + ": " + spec.columns[c] + " = " + cells[c] + " in a run that stayed finite");
    }
    rows.push_back(cells);
  }
  if (rows.empty() && spec.file != "skip.csv" && spec.file != "translate.csv" && spec.file != "stream.csv")
    problems.push_back(path + ": no rows");
}

}  // namespace

std::vector<std::string> check_outputs(const std::string& dir, const std::vector<std::string>& written, const Settings& s,
                                       const Results& results) {
  std::vector<std::string> problems = study::check_files(dir, written);
  std::vector<std::vector<std::vector<std::string>>> tables;
  for (const CsvSpec& spec : csv_specs()) {
    tables.emplace_back();
    try {
      check_csv(dir, spec, problems, tables.back());
    } catch (const std::exception& e) {
      problems.push_back(e.what());
    }
  }
  // runs.csv: stage, placement, setup, outcome, depth, lr, seed, steps_done, initial_loss, final_train_loss, plateau, val_loss, ...
  int pre_runs = 0;
  for (const auto& row : tables[1]) {
    if (row[0] != "grid" || row[1] != "pre") continue;
    ++pre_runs;
    const double initial = std::stod(row[8]), final_loss = std::stod(row[9]), val = std::stod(row[11]);
    if (row[3] == "diverged" || !(final_loss < initial) || !(val < initial))
      problems.push_back("Pre-LN, L = " + row[4] + ", seed " + row[6] + ": loss did not fall (" + row[3] + ", first step " +
                         row[8] + ", final " + row[9] + ", validation " + row[10] + ")");
  }
  if (pre_runs == 0) problems.push_back("runs.csv has no Pre-LN grid run: --check needs 'pre' in --placements");
  if (tables[1].size() != results.trained.size())
    problems.push_back("runs.csv has " + std::to_string(tables[1].size()) + " runs, the study trained " +
                       std::to_string(results.trained.size()));
  // every claim has a verdict in both reports
  for (const std::string file : {"report.md", "report.html"}) {
    std::string text;
    try {
      text = tapegrad::io::read_file(dir + "/" + file);
    } catch (const std::exception& e) {
      problems.push_back(e.what());
      continue;
    }
    for (int claim = 1; claim <= 11; ++claim)
      if (text.find("Claim " + std::to_string(claim) + ":") == std::string::npos)
        problems.push_back(file + " has no section for claim " + std::to_string(claim));
    if (text.find("Verdict") == std::string::npos && text.find("verdict") == std::string::npos)
      problems.push_back(file + " holds no verdict");
  }
  (void)s;
  return problems;
}

}  // namespace depth_study
