// test_doc_excerpts.cpp — code quoted in docs/ from the library stays what the library says.
// A ```text block whose first line is "// from <path>" quotes that file of the repository:
// its other lines must appear there, in the same order and one after the other, as they are.
// (Examples for users to copy are ```cpp blocks, compiled: test_all_docs_compiled.cpp.)
#include <filesystem>
#include <string>
#include <vector>

#include "support/docs.hpp"

using namespace tapegrad::testing;

namespace {

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::size_t start = 0;
  while (start < text.size()) {
    const std::size_t end = text.find('\n', start);
    lines.push_back(text.substr(start, end == std::string::npos ? std::string::npos : end - start));
    if (end == std::string::npos) break;
    start = end + 1;
  }
  return lines;
}

struct Excerpt {
  std::string page, source;
  std::vector<std::string> lines;
};

std::vector<Excerpt> excerpts_of(const std::string& page) {
  std::vector<Excerpt> out;
  const std::string text = read_text(page);
  std::size_t pos = 0;
  while ((pos = text.find("```text\n// from ", pos)) != std::string::npos) {
    const std::size_t first = pos + 8, end = text.find("\n```", first);
    std::vector<std::string> lines = lines_of(text.substr(first, end - first));
    Excerpt e{page, lines.front().substr(8), {lines.begin() + 1, lines.end()}};
    out.push_back(std::move(e));
    pos = end;
  }
  return out;
}

bool contains_run(const std::vector<std::string>& file, const std::vector<std::string>& run) {
  for (std::size_t i = 0; i + run.size() <= file.size(); ++i) {
    std::size_t k = 0;
    while (k < run.size() && file[i + k] == run[k]) ++k;
    if (k == run.size()) return true;
  }
  return false;
}

}  // namespace

TEST_CASE("docs: every excerpt of the library's code is what the file says", "[docs]") {
  std::vector<Excerpt> all;
  for (const auto& entry : std::filesystem::directory_iterator(kDocsDir))
    if (entry.path().extension() == ".md")
      for (Excerpt& e : excerpts_of(entry.path().string())) all.push_back(std::move(e));
  REQUIRE(!all.empty());  // docs/architecture.md quotes the B2T formula
  for (const Excerpt& e : all) {
    INFO(e.page << " quotes " << e.source);
    REQUIRE(std::filesystem::exists(kRepoRoot + "/" + e.source));
    CHECK(!e.lines.empty());
    CHECK(contains_run(lines_of(read_text(kRepoRoot + "/" + e.source)), e.lines));
  }
}
