// test_all_docs_compiled.cpp — no C++ block in docs/ goes uncompiled.
//
// The rule, for every page docs/*.md (README.md is checked by examples/check_in_readme.cmake):
//   1. each C++ block (```cpp, ```c++, ```cxx, ```cc, ```hpp; indented fences too) appears,
//      line by line, in code the tests compile: a tests/**/*.cpp file, or a file that one of
//      them #includes (a docs/snippets/*.inc, a tests/**/*.inc). Lines are compared without
//      their indentation, and blank lines are skipped, so a block may sit indented inside a
//      TEST_CASE (as between the BEGIN/END markers of tests/optim/test_optim_docs.cpp).
//   2. each docs/snippets/*.inc is #included by some tests/**/*.cpp.
// Exact equality of a block with its snippet, and the values it claims, are the page's own
// test's job (tests/docs/test_docs.cpp and the others); this test only makes sure there is one.
#include <algorithm>
#include <cctype>
#include <filesystem>
#include <map>
#include <set>
#include <sstream>
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

struct CodeBlock {
  std::size_t line = 0;  // of the opening fence, 1-based
  std::string text;
};

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

// The C++ blocks of a markdown page: fenced with ``` (indented or not) and a C++ info string.
std::vector<CodeBlock> cpp_code_blocks(const std::string& markdown) {
  static const std::set<std::string> cpp_names = {"cpp", "c++", "cxx", "cc", "hpp", "h++"};
  std::vector<CodeBlock> blocks;
  const std::vector<std::string> lines = lines_of(markdown);
  for (std::size_t i = 0; i < lines.size(); ++i) {
    const std::string fence = trim(lines[i]);
    if (fence.rfind("```", 0) != 0) continue;
    const std::string info = lower(trim(fence.substr(3)));
    std::size_t end = i + 1;
    while (end < lines.size() && trim(lines[end]).rfind("```", 0) != 0) ++end;
    if (cpp_names.count(info.substr(0, info.find(' ')))) {
      CodeBlock block{i + 1, ""};
      for (std::size_t k = i + 1; k < end; ++k) block.text += lines[k] + "\n";
      blocks.push_back(block);
    }
    i = end;  // skip the block's body and its closing fence
  }
  return blocks;
}

// The lines that matter for "is this code here": trimmed, blank lines dropped.
std::vector<std::string> code_lines(const std::string& text) {
  std::vector<std::string> out;
  for (const std::string& line : lines_of(text))
    if (std::string t = trim(line); !t.empty()) out.push_back(t);
  return out;
}

bool contains_lines(const std::vector<std::string>& haystack, const std::vector<std::string>& needle) {
  return !needle.empty() &&
         std::search(haystack.begin(), haystack.end(), needle.begin(), needle.end()) != haystack.end();
}

fs::path canonical_or_empty(const fs::path& p) {
  std::error_code ec;
  fs::path c = fs::canonical(p, ec);
  return ec ? fs::path() : c;
}

// The files a test source pulls in with #include "...": resolved against its own directory,
// then against tests/ (the test target's include directory).
std::vector<fs::path> quoted_includes(const fs::path& source, const fs::path& tests_dir) {
  std::vector<fs::path> found;
  for (const std::string& raw : lines_of(read_text(source.string()))) {
    const std::string line = trim(raw);
    if (line.rfind("#include \"", 0) != 0) continue;
    const std::size_t close = line.find('"', 10);
    if (close == std::string::npos) continue;
    const std::string name = line.substr(10, close - 10);
    for (const fs::path& base : {source.parent_path(), tests_dir})
      if (fs::path p = canonical_or_empty(base / name); !p.empty()) {
        found.push_back(p);
        break;
      }
  }
  return found;
}

// Everything the tests compile: tests/**/*.cpp and the files they #include, by canonical path.
std::map<fs::path, std::vector<std::string>> compiled_sources() {
  const fs::path tests_dir = canonical_or_empty(kRepoRoot + "/tests");
  REQUIRE_FALSE(tests_dir.empty());
  std::map<fs::path, std::vector<std::string>> sources;
  for (const auto& entry : fs::recursive_directory_iterator(tests_dir)) {
    if (!entry.is_regular_file() || entry.path().extension() != ".cpp") continue;
    const fs::path cpp = canonical_or_empty(entry.path());
    sources.emplace(cpp, code_lines(read_text(cpp.string())));
    for (const fs::path& inc : quoted_includes(cpp, tests_dir))
      if (!sources.count(inc)) sources.emplace(inc, code_lines(read_text(inc.string())));
  }
  return sources;
}

std::vector<fs::path> files_with_extension(const fs::path& dir, const std::string& ext) {
  std::vector<fs::path> files;
  for (const auto& entry : fs::directory_iterator(dir))
    if (entry.is_regular_file() && entry.path().extension() == ext) files.push_back(entry.path());
  std::sort(files.begin(), files.end());
  return files;
}

}  // namespace

TEST_CASE("docs: every C++ block of every page is compiled by a test", "[docs]") {
  const auto sources = compiled_sources();
  const std::vector<fs::path> pages = files_with_extension(kDocsDir, ".md");
  REQUIRE_FALSE(pages.empty());
  std::size_t checked = 0;
  for (const fs::path& page : pages) {
    for (const CodeBlock& block : cpp_code_blocks(read_text(page.string()))) {
      const std::vector<std::string> needle = code_lines(block.text);
      const bool compiled = std::any_of(sources.begin(), sources.end(),
                                        [&](const auto& source) { return contains_lines(source.second, needle); });
      INFO("docs/" << page.filename().string() << ", the C++ block at line " << block.line
                   << " is compiled by no test. Put its code in docs/snippets/<name>.inc, #include that"
                      " from a test under tests/ and check the block equals the file (see"
                      " tests/docs/test_tutorial_docs.cpp), or write it in a test word for word.\nThe block:\n"
                   << block.text);
      CHECK(compiled);
      ++checked;
    }
  }
  CHECK(checked > 0);
}

TEST_CASE("docs: every snippet file is #included by a test", "[docs]") {
  const auto sources = compiled_sources();
  const std::vector<fs::path> snippets = files_with_extension(kDocsDir + "/snippets", ".inc");
  REQUIRE_FALSE(snippets.empty());
  for (const fs::path& snippet : snippets) {
    INFO("docs/snippets/" << snippet.filename().string() << " is #included by no test under tests/");
    CHECK(sources.count(canonical_or_empty(snippet)) == 1);
  }
}

TEST_CASE("docs: the block finder sees every kind of C++ fence", "[docs]") {
  const std::string page =
      "text\n```cpp\na();\n```\n"
      "1. a list item\n   ```c++\n   b();\n   ```\n"
      "```\nplain output, not C++\n```\n"
      "```python\nc()\n```\n"
      "```CPP\nd();\n\n  e();\n```\n";
  const std::vector<CodeBlock> blocks = cpp_code_blocks(page);
  REQUIRE(blocks.size() == 3);
  CHECK(blocks[0].text == "a();\n");
  CHECK(blocks[0].line == 2);
  CHECK(blocks[1].text == "   b();\n");
  CHECK(code_lines(blocks[2].text) == std::vector<std::string>{"d();", "e();"});
  // Indentation and blank lines do not matter; order and content do.
  const std::vector<std::string> source = code_lines("TEST_CASE(...) {\n  d();\n\n    e();\n}\n");
  CHECK(contains_lines(source, code_lines(blocks[2].text)));
  CHECK_FALSE(contains_lines(source, code_lines("e();\nd();\n")));
  CHECK_FALSE(contains_lines(source, {}));
}
