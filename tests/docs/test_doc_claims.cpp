// test_doc_claims.cpp — what the pages say about the code's size and layout stays true, and no
// page repeats a heading.
//
// Each claim is read from its page (the number too), then checked against the files: change the
// code past a claim and the test names the page to edit; change the page and it checks the new
// number.
#include <algorithm>
#include <filesystem>
#include <map>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include "support/docs.hpp"

namespace fs = std::filesystem;
using tapegrad::testing::kDocsDir;
using tapegrad::testing::kRepoRoot;
using tapegrad::testing::read_text;

namespace {

std::size_t line_count(const std::string& text) {
  std::size_t n = 0;
  for (char c : text) n += c == '\n';
  return n + (!text.empty() && text.back() != '\n');
}

// The number captured by `pattern` (one group) in `page`, a path under the root.
std::size_t claimed(const std::string& page, const std::string& pattern) {
  const std::string text = read_text(kRepoRoot + "/" + page);
  std::smatch m;
  INFO(page << " no longer says \"" << pattern << "\": update this test with the page");
  REQUIRE(std::regex_search(text, m, std::regex(pattern)));
  return std::stoul(m[1]);
}

// The lines of a function: from the line holding `signature` to the next "}" at column 0.
std::size_t function_lines(const std::string& file, const std::string& signature) {
  const std::string text = read_text(kRepoRoot + "/" + file);
  const std::size_t start = text.find(signature);
  INFO(file << " has no \"" << signature << "\"");
  REQUIRE(start != std::string::npos);
  const std::size_t first = text.rfind('\n', start) + 1;
  const std::size_t end = text.find("\n}", start);
  REQUIRE(end != std::string::npos);
  return line_count(text.substr(first, end + 3 - first));
}

// The headings of a markdown page, outside code fences.
std::vector<std::string> headings(const std::string& markdown) {
  std::vector<std::string> out;
  bool fenced = false;
  std::size_t pos = 0;
  while (pos < markdown.size()) {
    const std::size_t eol = std::min(markdown.find('\n', pos), markdown.size());
    const std::string line = markdown.substr(pos, eol - pos);
    pos = eol + 1;
    const std::size_t indent = line.find_first_not_of(' ');
    if (indent != std::string::npos && line.compare(indent, 3, "```") == 0) fenced = !fenced;
    else if (!fenced && line.rfind("#", 0) == 0) out.push_back(line);
  }
  return out;
}

}  // namespace

TEST_CASE("docs: no page repeats a heading", "[docs]") {
  std::vector<fs::path> pages = {kRepoRoot + "/README.md", kRepoRoot + "/examples/README.md",
                                 kRepoRoot + "/bench/README.md"};
  for (const auto& entry : fs::directory_iterator(kDocsDir))
    if (entry.path().extension() == ".md") pages.push_back(entry.path());
  for (const fs::path& page : pages) {
    std::set<std::string> seen;
    for (const std::string& heading : headings(read_text(page.string()))) {
      INFO(page.string() << " has the heading \"" << heading << "\" twice");
      CHECK(seen.insert(heading).second);
    }
  }
  CHECK(headings("# a\n```sh\n# a comment\n```\n## b\n") == std::vector<std::string>{"# a", "## b"});
}

TEST_CASE("README.md: every op file of autograd/ops/ is as short as it says", "[docs]") {
  const std::size_t limit = claimed("README.md", R"(side by side in one file of under (\d+) lines)");
  std::size_t files = 0;
  for (const auto& entry : fs::directory_iterator(kRepoRoot + "/autograd/ops")) {
    if (entry.path().extension() != ".cpp") continue;
    ++files;
    const std::size_t lines = line_count(read_text(entry.path().string()));
    INFO(entry.path().filename().string() << " has " << lines << " lines; README.md says under " << limit);
    CHECK(lines < limit);
  }
  CHECK(files >= 10);
}

TEST_CASE("examples/README.md and docs/tutorial.md: the examples are as short as they say", "[docs]") {
  const std::size_t tiny_lm = claimed("examples/README.md", R"(a transformer language model in under (\d+) lines)");
  const std::size_t tiny_lm_lines = line_count(read_text(kRepoRoot + "/examples/tiny_lm.cpp"));
  INFO("examples/tiny_lm.cpp has " << tiny_lm_lines << " lines");
  CHECK(tiny_lm_lines < tiny_lm);
  const std::size_t loop = claimed("docs/tutorial.md", R"(the engine's loop, written out in the example \(under (\d+) lines\))");
  const std::size_t loop_lines =
      function_lines("examples/autodiff_tour.cpp", "std::map<const TensorImpl*, Tensor> backward_step_by_step(");
  INFO("autodiff_tour.cpp's backward_step_by_step has " << loop_lines << " lines");
  CHECK(loop_lines < loop);
}

TEST_CASE("docs/tutorial.md: the engine is one file, autograd/engine.cpp, and grad() one more", "[docs]") {
  CHECK(read_text(kDocsDir + "/tutorial.md").find("this is one file, `autograd/engine.cpp`") != std::string::npos);
  CHECK(read_text(kDocsDir + "/tutorial.md").find("`grad()` in `autograd/grad_capture.cpp`") != std::string::npos);
  // Every function that autograd/engine.hpp declares for the backward pass is defined there.
  const std::map<std::string, std::vector<std::string>> definitions = {
      {"autograd/engine.cpp", {"std::vector<Node*> topological_order(", "void run_backward(", "void detail::run_pass("}},
      {"autograd/grad_capture.cpp", {"TensorList grad(", "TensorList backward_to("}}};
  for (const auto& [file, functions] : definitions) {
    const std::string code = read_text(kRepoRoot + "/" + file);
    for (const std::string& definition : functions) {
      INFO(file << " does not define " << definition);
      CHECK(code.find(definition) != std::string::npos);
    }
  }
}

namespace {
// "About N lines" holds while N is within 10% (or 3 lines) of the count: an edit of a few lines
// does not fail CI, a file that grows past what the page says does.
bool about(std::size_t claimed_lines, std::size_t lines) {
  const std::size_t off = claimed_lines > lines ? claimed_lines - lines : lines - claimed_lines;
  return off <= std::max<std::size_t>(3, lines / 10);
}
}  // namespace

TEST_CASE("docs/the-tape.md: the engine is the size the page says, its loop on one screen", "[docs]") {
  const std::string page = "docs/the-tape.md";
  const std::size_t engine = line_count(read_text(kRepoRoot + "/autograd/engine.cpp"));
  const std::size_t node =
      line_count(read_text(kRepoRoot + "/autograd/node.hpp")) + line_count(read_text(kRepoRoot + "/autograd/node.cpp"));
  const std::size_t loop = function_lines("autograd/engine.cpp", "void detail::run_pass(");
  INFO("engine.cpp has " << engine << " lines, node.hpp and node.cpp " << node << ", run_pass " << loop);
  CHECK(about(claimed(page, R"(`autograd/engine.cpp` \(about (\d+) lines\))"), engine));
  CHECK(about(claimed(page, R"(`autograd/node.cpp` \(about (\d+) lines together\))"), node));
  CHECK(about(claimed(page, R"(`run_pass`, is about (\d+) lines)"), loop));
  CHECK(loop <= 50);  // one screen
  CHECK_FALSE(about(150, 660));  // what the page said once the three files had grown to 660 lines
  CHECK(about(25, 27));
}

TEST_CASE("docs/architecture.md: a placement is one unit file and one entry of the registry", "[docs]") {
  CHECK(read_text(kDocsDir + "/architecture.md")
            .find("Adding a placement is one unit file in `nn/placement/` and its entry in `registry.cpp`") !=
        std::string::npos);
  // The registry's list: one line per placement, X_placement(), defined in nn/placement/X.cpp.
  const std::string registry = read_text(kRepoRoot + "/nn/placement/registry.cpp");
  const std::size_t begin = registry.find("placements = {"), end = registry.find("};", begin);
  REQUIRE(begin != std::string::npos);
  const std::string list = registry.substr(begin, end - begin);
  const std::regex entry(R"(\n *(\w+)_placement\(\), )");
  std::set<std::string> units;
  for (std::sregex_iterator m(list.begin(), list.end(), entry), stop; m != stop; ++m) {
    const std::string unit = (*m)[1];
    units.insert(unit);
    const fs::path file = kRepoRoot + "/nn/placement/" + unit + ".cpp";
    INFO("registry.cpp lists " << unit << "_placement(), which nn/placement/" << unit << ".cpp should define");
    REQUIRE(fs::exists(file));
    CHECK(read_text(file.string()).find("PlacementInfo " + unit + "_placement()") != std::string::npos);
  }
  CHECK(units.size() >= 10);
  // And every other .cpp there is a placement's unit, but for the registry and the shared sublayer.
  for (const auto& f : fs::directory_iterator(kRepoRoot + "/nn/placement")) {
    const std::string stem = f.path().stem().string();
    if (f.path().extension() != ".cpp" || stem == "registry" || stem == "sublayer") continue;
    INFO("nn/placement/" << stem << ".cpp is not in registry.cpp's list");
    CHECK(units.count(stem) == 1);
  }
}
