// docs/depth-study.md quotes the default run committed under docs/depth-study/default/: every
// verdict of its table must be the committed report's verdict for that claim, and the time and
// plan it quotes must be the report's. (A page that went on quoting an older run, after the
// study changed, fails here: rerun the default study into docs/depth-study/default/.)
#include <catch2/catch.hpp>

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

}  // namespace

TEST_CASE("docs/depth-study.md quotes the verdicts of the committed default run", "[docs]") {
  const std::string page = read_text(kDocsDir + "/depth-study.md");
  const std::string report = read_text(kDocsDir + "/depth-study/default/report.md");
  const auto quoted = verdicts(table_after(page, "### The verdicts"), 0, 1);
  const auto measured = verdicts(table_after(report, "## Verdicts at a glance"), 0, 1);
  CHECK(quoted.size() == 11);
  for (const auto& [claim, words] : measured) {
    INFO("claim " << claim);
    const auto page_words = quoted.find(claim);
    REQUIRE(page_words != quoted.end());
    CHECK(std::vector<std::string>(page_words->second.begin(), page_words->second.end()) ==
          std::vector<std::string>(words.begin(), words.end()));
  }
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
