// test_docs.cpp — the code in the docs compiles and does what the docs say.
//
// Each C++ block of a doc page that has a snippet file in docs/snippets/ must equal that
// file, and the file is compiled here (#include) and its claims checked. Edit both together.
#include <fstream>
#include <iostream>
#include <sstream>

#include <catch2/catch.hpp>
#include <tapegrad/tapegrad.hpp>

using namespace tapegrad;

namespace {

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  REQUIRE(in.good());
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// All ```cpp blocks of a markdown file, in order.
std::vector<std::string> cpp_blocks(const std::string& markdown) {
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

// The reference dir is tests/reference; the docs are two levels up from it.
const std::string docs_dir = std::string(TAPEGRAD_REFERENCE_DIR) + "/../../docs";

}  // namespace

TEST_CASE("docs/the-tape.md: the worked example", "[docs]") {
  const auto blocks = cpp_blocks(read_file(docs_dir + "/the-tape.md"));
  REQUIRE(blocks.size() >= 2);
  CHECK(blocks[0] == read_file(docs_dir + "/snippets/the_tape.inc"));
  CHECK(blocks[1] == read_file(docs_dir + "/snippets/gradcheck.inc"));

  std::ostringstream captured;
  std::streambuf* old = std::cout.rdbuf(captured.rdbuf());
#include "../../docs/snippets/the_tape.inc"
  std::cout.rdbuf(old);
  CHECK(L.item() == 25);
  CHECK(x.grad().item() == 30);
  CHECK(w.grad().item() == -20);
  CHECK(b.grad().item() == -10);
  // The listing printed in the doc is the one the program prints.
  CHECK(read_file(docs_dir + "/the-tape.md").find(captured.str()) != std::string::npos);
}

TEST_CASE("docs/the-tape.md: gradcheck", "[docs]") {
  Generator gen(0);
#include "../../docs/snippets/gradcheck.inc"
  CHECK(r.ok);
}
