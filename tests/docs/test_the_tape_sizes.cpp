// test_the_tape_sizes.cpp — the sizes docs/the-tape.md quotes are the code's.
//
// The page promises a ten-minute read: the engine in about so many lines, the node in about so
// many, and run_pass, the loop itself, on one screen. "About N" holds while N is within 10% (or
// 3 lines) of the count, so that an edit of a few lines does not fail CI, and a file that grows
// past what the page says does. The loop must also stay at most 50 lines.
#include <algorithm>
#include <cstdlib>
#include <regex>
#include <string>

#include "support/docs.hpp"

using namespace tapegrad::testing;

namespace {

int count_lines(const std::string& text) { return static_cast<int>(std::count(text.begin(), text.end(), '\n')); }

// The number the page quotes in the first match of `pattern` (one capture group).
int quoted(const std::string& page, const std::string& pattern) {
  std::smatch m;
  INFO("docs/the-tape.md must say: " << pattern);
  REQUIRE(std::regex_search(page, m, std::regex(pattern)));
  return std::atoi(m[1].str().c_str());
}

bool about(int claimed, int actual) { return std::abs(claimed - actual) <= std::max(3, actual / 10); }

// The lines of a function's body: from the line after the one that opens it to the line of
// the closing brace in column 0.
int body_lines(const std::string& source, const std::string& signature) {
  const std::size_t at = source.find(signature);
  REQUIRE(at != std::string::npos);
  const std::size_t open = source.find("{\n", at);
  const std::size_t close = source.find("\n}\n", open);
  REQUIRE(close != std::string::npos);
  return count_lines(source.substr(open + 2, close + 1 - (open + 2)));
}

}  // namespace

TEST_CASE("docs/the-tape.md: the engine's sizes are the code's", "[docs]") {
  const std::string page = read_text(kDocsDir + "/the-tape.md");
  const std::string engine = read_text(kRepoRoot + "/autograd/engine.cpp");
  const int engine_lines = count_lines(engine);
  const int node_lines =
      count_lines(read_text(kRepoRoot + "/autograd/node.hpp")) + count_lines(read_text(kRepoRoot + "/autograd/node.cpp"));
  const int loop_lines = body_lines(engine, "void detail::run_pass(");

  const int claimed_engine = quoted(page, R"(`autograd/engine.cpp` \(about (\d+) lines\))");
  const int claimed_node = quoted(page, R"(`autograd/node.cpp` \(about (\d+) lines together\))");
  const int claimed_loop = quoted(page, R"(`run_pass`, is about (\d+) lines)");
  INFO("engine.cpp " << engine_lines << " lines, node.hpp + node.cpp " << node_lines << ", run_pass's body "
                     << loop_lines);
  CHECK(about(claimed_engine, engine_lines));
  CHECK(about(claimed_node, node_lines));
  CHECK(about(claimed_loop, loop_lines));
  CHECK(loop_lines <= 50);  // one screen
}

TEST_CASE("docs/the-tape.md: the size check fails on a wrong claim", "[docs]") {
  CHECK_FALSE(about(150, 660));  // what the page said when the three files had grown to 660
  CHECK_FALSE(about(20, 27));
  CHECK(about(25, 27));
  CHECK(body_lines("void f() {\n  a;\n  b;\n}\n", "void f(") == 3);
}
