// history.cpp — History of history.hpp: the files read at the start, then the steps added.
#include "history.hpp"

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <sstream>
#include <stdexcept>

#include <tapegrad/tapegrad.hpp>

namespace lm {

using namespace tapegrad;

namespace {

// The cells of a CSV line without quoted cells (the files here hold numbers only).
std::vector<std::string> cells(const std::string& line) {
  std::vector<std::string> out;
  std::istringstream in(line);
  for (std::string cell; std::getline(in, cell, ',');) out.push_back(cell);
  if (!line.empty() && line.back() == ',') out.emplace_back();  // a last, empty cell
  return out;
}

// Reads the CSV file at path, header first: for every row, its step and each wanted column's
// value (NaN where the cell is empty or the column is missing), to `each`.
template <typename Each>
void read_rows(const std::string& path, const std::vector<std::string>& wanted, Each each) {
  if (path.empty() || !std::filesystem::exists(path)) return;
  std::istringstream in(io::read_file(path));
  std::string line;
  if (!std::getline(in, line)) return;
  const std::vector<std::string> header = cells(line);
  std::vector<std::ptrdiff_t> column;  // of each wanted name; -1: the file has none
  for (const std::string& name : wanted) {
    std::ptrdiff_t at = -1;
    for (std::size_t i = 0; i < header.size(); ++i)
      if (header[i] == name) at = static_cast<std::ptrdiff_t>(i);
    column.push_back(at);
  }
  while (std::getline(in, line)) {
    const std::vector<std::string> row = cells(line);
    if (row.empty() || row[0].empty()) continue;
    std::vector<double> values;
    for (const std::ptrdiff_t at : column) {
      const bool has = at >= 0 && static_cast<std::size_t>(at) < row.size() && !row[static_cast<std::size_t>(at)].empty();
      values.push_back(has ? std::strtod(row[static_cast<std::size_t>(at)].c_str(), nullptr) : NAN);
    }
    each(std::strtod(row[0].c_str(), nullptr), values);
  }
}

std::string blocks_header(std::int64_t n_blocks) {
  std::string header = "step";
  for (std::int64_t b = 0; b < n_blocks; ++b) header += ",block_" + std::to_string(b);
  return header;
}

}  // namespace

History::History(const std::string& log, const std::string& blocks, const std::string& speed, std::int64_t resume_step,
                 std::int64_t n_blocks)
    : block_norms(static_cast<std::size_t>(n_blocks)) {
  // The side files first: a resumed run cuts them back to its step, then reads them.
  const std::string header = blocks_header(n_blocks);
  blocks_file_ = training::open_step_file(blocks, header, resume_step, "per-block gradient norms file", "--report");
  speed_file_ = training::open_step_file(speed, "step,tokens_per_s", resume_step, "speed file", "--report");
  if (resume_step < 0) return;
  read_rows(log, {"loss", "smoothed_loss", "val_loss", "lr", "grad_norm"}, [&](double step, const std::vector<double>& v) {
    loss.add(step, v[0]), smoothed.add(step, v[1]), lr.add(step, v[3]), grad_norm.add(step, v[4]);
    if (!std::isnan(v[2])) val_loss.add(step, v[2]);
  });
  std::vector<std::string> names = cells(header);
  names.erase(names.begin());  // the step
  read_rows(blocks, names, [&](double step, const std::vector<double>& v) {
    for (std::size_t b = 0; b < v.size(); ++b) block_norms[b].add(step, v[b]);
  });
  read_rows(speed, {"tokens_per_s"}, [&](double step, const std::vector<double>& v) { tokens_per_s.add(step, v[0]); });
}

void History::add_metrics(std::int64_t step, double loss_now, double smoothed_now, double val_now, double lr_now,
                          double norm_now) {
  const auto x = static_cast<double>(step);
  loss.add(x, loss_now), smoothed.add(x, smoothed_now), lr.add(x, lr_now), grad_norm.add(x, norm_now);
  if (!std::isnan(val_now)) val_loss.add(x, val_now);
}

void History::add_block_norms(std::int64_t step, const std::vector<double>& norms) {
  if (norms.size() != block_norms.size())
    throw std::logic_error("History::add_block_norms: " + std::to_string(norms.size()) + " norms for " +
                           std::to_string(block_norms.size()) + " blocks");
  blocks_file_ << step;
  for (std::size_t b = 0; b < norms.size(); ++b) {
    block_norms[b].add(static_cast<double>(step), norms[b]);
    blocks_file_ << ',' << training::csv_number(norms[b]);
  }
  blocks_file_ << '\n';
}

void History::add_speed(std::int64_t step, double rate) {
  tokens_per_s.add(static_cast<double>(step), rate);
  speed_file_ << step << ',' << training::csv_number(rate) << '\n';
}

void History::flush() {
  blocks_file_.flush();
  speed_file_.flush();
}

}  // namespace lm
