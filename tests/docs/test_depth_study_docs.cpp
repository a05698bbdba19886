// docs/depth-study.md quotes the default run committed under docs/depth-study/default/ and the
// full run under docs/depth-study/full/: every verdict of their tables must be the committed
// report's verdict for that claim, and the time and plan it quotes must be the report's. (A page that went on quoting an older run, after the
// study changed, fails here: rerun the default study into docs/depth-study/default/.)
#include <catch2/catch.hpp>

#include <cmath>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "support/docs.hpp"

using tapegrad::testing::kDocsDir;
using tapegrad::testing::read_text;
using tapegrad::testing::trim;

namespace {

// The rows of the first markdown table after the line `heading`: its cells, trimmed.
std::vector<std::vector<std::string>> table_after(const std::string& text, const std::string& heading) {
  const auto at = text.find("\n" + heading + "\n");
  REQUIRE(at != std::string::npos);
  std::istringstream in(text.substr(at + heading.size() + 2));
  std::vector<std::vector<std::string>> rows;
  bool inside = false;
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("|", 0) != 0) {
      if (inside) break;
      continue;
    }
    inside = true;
    if (line.rfind("|---", 0) == 0) continue;
    std::vector<std::string> cells;
    std::size_t from = 1;
    for (std::size_t bar; (bar = line.find('|', from)) != std::string::npos; from = bar + 1)
      cells.push_back(trim(line.substr(from, bar - from)));
    rows.push_back(cells);
  }
  REQUIRE(rows.size() > 1);
  rows.erase(rows.begin());  // the header
  return rows;
}

// The verdict words of a cell: "supported", "not measured", ...; links, emphasis and a
// qualifier in parentheses ("not measured (inconclusive)") left out.
std::string verdict_of(std::string cell) {
  cell = std::regex_replace(cell, std::regex(R"(\[([^\]]*)\]\([^)]*\))"), "$1");
  cell = std::regex_replace(cell, std::regex(R"(\*)"), "");
  cell = std::regex_replace(cell, std::regex(R"( \([^)]*\)$)"), "");
  return trim(cell);
}

// claim number -> its verdicts, in order.
std::map<std::string, std::multiset<std::string>> verdicts(const std::vector<std::vector<std::string>>& rows,
                                                           std::size_t claim_column, std::size_t verdict_column) {
  std::map<std::string, std::multiset<std::string>> out;
  for (const auto& row : rows) {
    REQUIRE(row.size() > verdict_column);
    std::smatch number;
    const std::string claim = row[claim_column];
    REQUIRE(std::regex_search(claim, number, std::regex(R"(^\d+)")));
    out[number.str()].insert(verdict_of(row[verdict_column]));
  }
  return out;
}


// Every claim's verdicts in the page's table under `heading` are the report's, and the other
// way round (a "depends" row the report has is quoted).
void check_quotes_verdicts(const std::string& heading, const std::string& report_file) {
  const std::string page = read_text(kDocsDir + "/depth-study.md");
  const std::string report = read_text(kDocsDir + "/depth-study/" + report_file);
  const auto quoted = verdicts(table_after(page, heading), 0, 1);
  const auto measured = verdicts(table_after(report, "## Verdicts at a glance"), 0, 1);
  CHECK(quoted.size() == measured.size());  // every claim the report judged, and no other
  for (const auto& [claim, words] : measured) {
    INFO(report_file << ", claim " << claim);
    const auto page_words = quoted.find(claim);
    REQUIRE(page_words != quoted.end());
    CHECK(std::vector<std::string>(page_words->second.begin(), page_words->second.end()) ==
          std::vector<std::string>(words.begin(), words.end()));
  }
}

}  // namespace

TEST_CASE("docs/depth-study.md quotes the verdicts of the committed default run", "[docs]") {
  check_quotes_verdicts("### The verdicts", "default/report.md");
}

TEST_CASE("docs/depth-study.md quotes the verdicts and the plan of the committed full run", "[docs]") {
  check_quotes_verdicts("### What the full study measured", "full/report.md");
  const std::string page = read_text(kDocsDir + "/depth-study.md");
  const std::string report = read_text(kDocsDir + "/depth-study/full/report.md");
  CHECK(report.find("--d-model 64 --heads 4 --seq-len 32") != std::string::npos);
  CHECK(report.find("--steps 4000") != std::string::npos);
  CHECK(report.find("--seeds 1,2,3,4,5") != std::string::npos);
  CHECK(page.find("d_model 64, 4,000 steps of 16 × 32 tokens") != std::string::npos);
  // the runs the page counts and the process-seconds it quotes
  std::smatch runs, seconds;
  REQUIRE(std::regex_search(report, runs, std::regex(R"(resumed (\d+) of the (\d+) runs)")));
  CHECK(page.find("with the " + runs[2].str() + " records") != std::string::npos);
  REQUIRE(std::regex_search(report, seconds, std::regex(R"(over every sitting, ([0-9.e+]+) process-seconds)")));
  CHECK(std::lround(std::stod(seconds[1].str()) / 10) * 10 == 39250);
  CHECK(page.find("39,250 process-seconds") != std::string::npos);
}


TEST_CASE("docs/depth-study.md quotes the committed default run's time and plan", "[docs]") {
  const std::string page = read_text(kDocsDir + "/depth-study.md");
  const std::string report = read_text(kDocsDir + "/depth-study/default/report.md");
  std::smatch took;
  REQUIRE(std::regex_search(report, took, std::regex(R"(the whole run took (\d+:\d\d))")));
  CHECK(page.find("it took **" + took[1].str()) != std::string::npos);
  // The rerun command of the report.
  std::smatch command;
  REQUIRE(std::regex_search(report, command, std::regex(R"(\n(depth_study --tokenizer [^\n]*))")));
  // The page's model and budget are the run's.
  CHECK(page.find("d_model 48, 4 heads, context 32") != std::string::npos);
  CHECK(page.find("400 steps of 16 × 32 tokens: 204,800 tokens a run") != std::string::npos);
  CHECK(command[1].str().find("--d-model 48 --heads 4 --seq-len 32") != std::string::npos);
  CHECK(command[1].str().find("--batch 16") != std::string::npos);
  CHECK(command[1].str().find("--steps 400") != std::string::npos);
}
