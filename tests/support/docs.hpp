// docs.hpp — helpers for the tests that keep docs/ honest: each ```cpp block of a page must
// equal code that a test compiles and runs.
#pragma once

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

namespace tapegrad::testing {

// The repository's root.
inline const std::string kRepoRoot = TAPEGRAD_SOURCE_DIR;
inline const std::string kDocsDir = kRepoRoot + "/docs";

// The whole text of a file; fails the test (naming the path) when it cannot be read.
inline std::string read_text(const std::string& path) {
  std::ifstream in(path);
  INFO(path);
  REQUIRE(in.good());
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// s without its leading and trailing blanks (spaces, tabs, a CR).
inline std::string trim(const std::string& s) {
  const auto first = s.find_first_not_of(" \t\r");
  if (first == std::string::npos) return "";
  return s.substr(first, s.find_last_not_of(" \t\r") - first + 1);
}

// All ```cpp blocks of a markdown page, in order, without their fences.
inline std::vector<std::string> cpp_blocks(const std::string& markdown) {
  std::vector<std::string> blocks;
  std::size_t pos = 0;
  while ((pos = markdown.find("```cpp\n", pos)) != std::string::npos) {
    pos += 7;
    const std::size_t end = markdown.find("```", pos);
    blocks.push_back(markdown.substr(pos, end - pos));
    pos = end + 3;
  }
  return blocks;
}

// The rows of a CSV file of plain cells (the files the examples commit under docs/ hold no
// quoted cell), header first.
inline std::vector<std::vector<std::string>> csv_rows(const std::string& path) {
  std::vector<std::vector<std::string>> rows;
  std::istringstream in(read_text(path));
  for (std::string line; std::getline(in, line);) {
    std::vector<std::string> cells;
    std::istringstream cells_in(line);
    for (std::string cell; std::getline(cells_in, cell, ',');) cells.push_back(cell);
    rows.push_back(cells);
  }
  return rows;
}

}  // namespace tapegrad::testing
