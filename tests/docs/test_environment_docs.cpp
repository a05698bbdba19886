// test_environment_docs.cpp — docs/environment.md's tables cannot rot.
//
// Its first table lists the TAPEGRAD_* environment variables: every name the repository reads
// from the environment has a row, and every row names one still read. A name counts as read
// where it is written as the whole of a string literal in a C++ or Python file (std::getenv,
// env_switch, os.environ: a literal that is exactly a name is one looked up in the environment)
// or expanded in a shell script ($TAPEGRAD_X, ${TAPEGRAD_X...}) or a CMake file ($ENV{...}).
// Its second table lists the CMake options, every option(TAPEGRAD_...) of a CMakeLists.txt.
#include <filesystem>
#include <map>
#include <regex>
#include <set>
#include <string>

#include "support/docs.hpp"

namespace fs = std::filesystem;
using tapegrad::testing::kDocsDir;
using tapegrad::testing::kRepoRoot;
using tapegrad::testing::read_text;

namespace {

// Name -> the first file (relative to the root) that matched `pattern` on it, over the
// repository's files whose name `wanted` accepts. Build folders and dot folders are skipped.
template <typename Wanted>
std::map<std::string, std::string> names_in_files(const std::regex& pattern, Wanted wanted) {
  std::map<std::string, std::string> found;
  const fs::path root(kRepoRoot);
  for (auto it = fs::recursive_directory_iterator(root); it != fs::recursive_directory_iterator(); ++it) {
    const std::string name = it->path().filename().string();
    if (it->is_directory() && (name.rfind("build", 0) == 0 || name.rfind(".", 0) == 0)) {
      it.disable_recursion_pending();
      continue;
    }
    if (!it->is_regular_file() || !wanted(it->path())) continue;
    const std::string text = read_text(it->path().string());
    for (std::sregex_iterator m(text.begin(), text.end(), pattern), end; m != end; ++m)
      found.emplace((*m)[1], fs::relative(it->path(), root).string());
  }
  return found;
}

std::map<std::string, std::string> variables_read() {
  const std::regex literal("\"(TAPEGRAD_[A-Z0-9_]+)\"");
  const std::regex expansion(R"(\$\{?(TAPEGRAD_[A-Z0-9_]+))");
  const std::regex cmake_env(R"(\$ENV\{(TAPEGRAD_[A-Z0-9_]+)\})");
  auto found = names_in_files(literal, [](const fs::path& p) {
    const std::string ext = p.extension().string();
    // This file names no variable in quotes; skip it anyway, it is the checker.
    return (ext == ".cpp" || ext == ".hpp" || ext == ".h" || ext == ".py") && p.filename() != "test_environment_docs.cpp";
  });
  found.merge(names_in_files(expansion, [](const fs::path& p) { return p.extension() == ".sh"; }));
  found.merge(names_in_files(cmake_env, [](const fs::path& p) {
    return p.filename() == "CMakeLists.txt" || p.extension() == ".cmake";
  }));
  return found;
}

// The first cells, `NAME` without its backquotes, of the table right after `heading`'s text.
std::set<std::string> first_column(const std::string& page, const std::string& heading, const std::string& header) {
  std::size_t pos = page.find(heading);
  REQUIRE(pos != std::string::npos);
  pos = page.find("\n" + header + "\n", pos);
  INFO("no table \"" << header << "\" after \"" << heading << "\"");
  REQUIRE(pos != std::string::npos);
  std::set<std::string> names;
  pos = page.find('\n', pos + 1) + 1;  // the header
  pos = page.find('\n', pos) + 1;      // the |---| line
  const std::regex row(R"(\| `([A-Z0-9_]+)` \|.*)");
  while (pos < page.size() && page[pos] == '|') {
    const std::size_t eol = page.find('\n', pos);
    const std::string line = page.substr(pos, eol - pos);
    std::smatch m;
    INFO(line);
    REQUIRE(std::regex_match(line, m, row));
    CHECK(names.insert(m[1]).second);  // each once
    pos = eol + 1;
  }
  return names;
}

// Every name found has a row, and every row is a name found.
void check_rows(const std::map<std::string, std::string>& found, const std::set<std::string>& rows,
                const std::string& what) {
  for (const auto& [name, file] : found) {
    INFO(file << " reads or declares " << what << " " << name << ", which docs/environment.md does not list");
    CHECK(rows.count(name) == 1);
  }
  for (const std::string& name : rows) {
    INFO("docs/environment.md lists " << what << " " << name << ", which nothing reads or declares any more");
    CHECK(found.count(name) == 1);
  }
}

}  // namespace

TEST_CASE("docs/environment.md: every TAPEGRAD_* variable read has a row, every row is read", "[docs]") {
  const std::map<std::string, std::string> read = variables_read();
  REQUIRE(read.size() >= 8);  // the scan finds the library's and the scripts' variables
  const std::set<std::string> rows = first_column(read_text(kDocsDir + "/environment.md"), "# Environment variables",
                                                  "| variable | what it does | default | read by |");
  check_rows(read, rows, "the environment variable");
}

TEST_CASE("docs/environment.md: every CMake option has a row, every row is an option", "[docs]") {
  const std::regex option(R"(\noption\((TAPEGRAD_[A-Z0-9_]+) )");
  const auto options = names_in_files(option, [](const fs::path& p) { return p.filename() == "CMakeLists.txt"; });
  REQUIRE(options.size() >= 8);
  const std::set<std::string> rows =
      first_column(read_text(kDocsDir + "/environment.md"), "## CMake options", "| option | what it does | default |");
  check_rows(options, rows, "the CMake option");
  CHECK(read_text(kDocsDir + "/index.md").find("(environment.md)") != std::string::npos);
}
