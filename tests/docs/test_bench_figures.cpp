// test_bench_figures.cpp — bench/README.md is one current page, and README.md and
// docs/performance.md quote its figures as they are.
//
// bench/README.md's "## Current figures" holds one table, | measure | figure | target | met | run |,
// each run a letter defined above it with the date it was recorded. The sections that quote it,
// README.md's "## Performance" and docs/performance.md's "## The current figures", may name no
// ratio ("2.17x", or a range "1.77–3.67x") that is not a figure of the table, must quote the
// figures of the rows listed below, and must carry the date of the runs they come from. Changing
// a figure in the table without the pages (or the other way round) fails here.
#include <filesystem>
#include <map>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "support/docs.hpp"

namespace fs = std::filesystem;
using tapegrad::testing::kDocsDir;
using tapegrad::testing::kRepoRoot;
using tapegrad::testing::read_text;
using tapegrad::testing::trim;

namespace {

// The text from `heading` (a whole line) to the next heading of the same or a higher level.
std::string section(const std::string& page, const std::string& heading) {
  const std::size_t start = page.find("\n" + heading + "\n");
  INFO("no line \"" << heading << "\"");
  REQUIRE(start != std::string::npos);
  const std::string level = heading.substr(0, heading.find(' '));  // "##"
  std::size_t end = start + heading.size() + 2;
  for (;;) {
    end = page.find("\n#", end);
    if (end == std::string::npos) return page.substr(start);
    const std::size_t hashes = page.find_first_not_of('#', end + 1) - (end + 1);
    if (hashes <= level.size() && page[end + 1 + hashes] == ' ') return page.substr(start, end - start);
    ++end;
  }
}

std::vector<std::string> cells(const std::string& row) {
  std::vector<std::string> out;
  std::size_t pos = row.find('|') + 1;
  for (std::size_t bar; (bar = row.find('|', pos)) != std::string::npos; pos = bar + 1)
    out.push_back(trim(row.substr(pos, bar - pos)));
  return out;
}

struct Row {
  std::string measure, figure, run;  // figure: the first word of the cell, "2.17x"
};

struct Table {
  std::vector<Row> rows;
  std::map<std::string, std::string> run_dates;  // "A" -> "2026-12-06"
};

Table current_figures() {
  const std::string current = section(read_text(kRepoRoot + "/bench/README.md"), "## Current figures");
  Table table;
  const std::regex run_line(R"(\n- \*\*([A-Z])\*\*: recorded (\d{4}-\d\d-\d\d))");
  for (std::sregex_iterator m(current.begin(), current.end(), run_line), end; m != end; ++m)
    table.run_dates[(*m)[1]] = (*m)[2];
  bool in_table = false;
  std::size_t tables = 0;
  for (std::size_t pos = 0; pos < current.size();) {
    const std::size_t eol = std::min(current.find('\n', pos), current.size());
    const std::string line = current.substr(pos, eol - pos);
    pos = eol + 1;
    if (line.rfind("|", 0) != 0) {
      in_table = false;
      continue;
    }
    const std::vector<std::string> c = cells(line);
    if (!in_table) {
      in_table = true;
      ++tables;
      CHECK(c == std::vector<std::string>{"measure", "figure", "target", "met", "run"});
      continue;
    }
    if (line.rfind("|---", 0) == 0) continue;
    REQUIRE(c.size() == 5);
    table.rows.push_back({c[0], c[1].substr(0, c[1].find(' ')), c[4]});
  }
  CHECK(tables == 1);  // one table of current figures, not one per day
  return table;
}

// The ratios a page quotes: "2.17x", and both ends of "1.77–3.67x".
std::set<std::string> quoted_ratios(const std::string& text) {
  std::set<std::string> out;
  const std::regex ratio(R"((\d+\.\d+)(?:–(\d+\.\d+))?x)");
  for (std::sregex_iterator m(text.begin(), text.end(), ratio), end; m != end; ++m) {
    out.insert((*m)[1].str() + "x");
    if ((*m)[2].matched) out.insert((*m)[2].str() + "x");
  }
  return out;
}

const Row& row(const Table& table, const std::string& measure) {
  for (const Row& r : table.rows)
    if (r.measure == measure) return r;
  FAIL("bench/README.md's table has no row \"" << measure << "\"");
  throw;  // unreachable
}

// What a quoting section must say: these rows' figures and their runs' dates; and no ratio
// that the table does not hold.
void check_quotes(const Table& table, const std::string& name, const std::string& text,
                  const std::vector<std::string>& required_rows) {
  std::set<std::string> figures;
  for (const Row& r : table.rows) figures.insert(r.figure);
  for (const std::string& ratio : quoted_ratios(text)) {
    INFO(name << " quotes " << ratio << ", which is no figure of bench/README.md's table");
    CHECK(figures.count(ratio) == 1);
  }
  for (const std::string& measure : required_rows) {
    const Row& r = row(table, measure);
    INFO(name << " does not quote \"" << measure << "\": " << r.figure);
    CHECK(text.find(r.figure) != std::string::npos);
    INFO("nor the date of run " << r.run);
    REQUIRE(table.run_dates.count(r.run) == 1);
    CHECK(text.find(table.run_dates.at(r.run)) != std::string::npos);
  }
}

const std::vector<std::string> kOverPyTorch = {"S, 1 thread, over PyTorch", "M, 1 thread, over PyTorch",
                                               "G, 1 thread, over PyTorch"};

}  // namespace

TEST_CASE("bench/README.md: one table of current figures, each of a dated run", "[docs][bench]") {
  const Table table = current_figures();
  REQUIRE(table.rows.size() >= 10);
  for (const Row& r : table.rows) {
    INFO(r.measure);
    CHECK(table.run_dates.count(r.run) == 1);
    CHECK(std::regex_match(r.figure, std::regex(R"(\d+\.\d+x?)")));
  }
  // The dated logs are history, on their own page, which says so first.
  const std::string history = read_text(kRepoRoot + "/bench/history/README.md");
  CHECK(history.rfind("# Benchmarks: the dated logs (history)\n\nThis page is history.", 0) == 0);
  // And bench/README.md holds no day's log: no heading names a day.
  const std::string page = read_text(kRepoRoot + "/bench/README.md");
  const std::regex day_heading(R"(\n#+ [^\n]*\bday\b[^\n]*)");
  for (std::sregex_iterator m(page.begin(), page.end(), day_heading), end; m != end; ++m)
    FAIL_CHECK("a dated log on the current page: " << m->str().substr(1));
}

TEST_CASE("docs: README.md and docs/performance.md quote bench/README.md's figures", "[docs][bench]") {
  const Table table = current_figures();
  const std::string readme = section(read_text(kRepoRoot + "/README.md"), "## Performance");
  check_quotes(table, "README.md's \"Performance\"", readme, kOverPyTorch);
  // The range README.md gives is the table's, lowest to highest.
  std::string low = row(table, kOverPyTorch[0]).figure, high = low;
  for (const std::string& m : kOverPyTorch) {
    const std::string f = row(table, m).figure;
    if (std::stod(f) < std::stod(low)) low = f;
    if (std::stod(f) > std::stod(high)) high = f;
  }
  const std::string range = low.substr(0, low.size() - 1) + "–" + high;
  INFO("README.md should say " << range);
  CHECK(readme.find(range) != std::string::npos);

  std::vector<std::string> required = kOverPyTorch;
  for (const char* m :
       {"S, 1 thread, over LibTorch", "M, 1 thread, over LibTorch", "G, 1 thread, over LibTorch",
        "M, 2 threads, over PyTorch's best 2-thread setting", "M, 2 threads over 1 thread",
        "S, 1 thread, step over its floor, OpenBLAS", "S, 1 thread, step over its floor, kernel",
        "M, 1 thread, step over its floor, OpenBLAS", "M, 1 thread, step over its floor, kernel",
        "G, 1 thread, step over its floor, OpenBLAS"})
    required.push_back(m);
  check_quotes(table, "docs/performance.md's \"The current figures\"",
               section(read_text(kDocsDir + "/performance.md"), "## The current figures"), required);
}

TEST_CASE("bench/README.md: every program and script of bench/ is on the page", "[docs][bench]") {
  const std::string page = read_text(kRepoRoot + "/bench/README.md");
  std::size_t files = 0;
  for (const auto& entry : fs::directory_iterator(kRepoRoot + "/bench")) {
    if (!entry.is_regular_file()) continue;
    const std::string name = entry.path().filename().string();
    if (name == "README.md" || name == "CMakeLists.txt") continue;
    ++files;
    // A program by its name (train_step), a script or header by its file name (ddp_scaling.sh).
    const std::string stem = entry.path().stem().string();
    const bool program = entry.path().extension() == ".cpp";
    INFO("bench/README.md does not say what bench/" << name << " is");
    CHECK(page.find(program ? stem : name) != std::string::npos);
  }
  CHECK(files > 10);
}
