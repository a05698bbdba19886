// test_docs.cpp — the code in the docs compiles and does what the docs say.
//
// Each C++ block of a doc page that has a snippet file in docs/snippets/ must equal that
// file, and the file is compiled here (#include) and its claims checked. Edit both together.
#include <fstream>
#include <iostream>
#include <sstream>

#include <catch2/catch.hpp>
#include <tapegrad/tapegrad.hpp>

#include "support/docs.hpp"

using namespace tapegrad;
using tapegrad::testing::cpp_blocks;
using tapegrad::testing::kDocsDir;
using tapegrad::testing::read_text;


TEST_CASE("docs/the-tape.md: the worked example", "[docs]") {
  const auto blocks = cpp_blocks(read_text(kDocsDir + "/the-tape.md"));
  REQUIRE(blocks.size() >= 3);
  CHECK(blocks[0] == read_text(kDocsDir + "/snippets/the_tape.inc"));
  CHECK(blocks[1] == read_text(kDocsDir + "/snippets/the_tape_trace.inc"));
  CHECK(blocks[2] == read_text(kDocsDir + "/snippets/gradcheck.inc"));

  std::ostringstream captured;
  std::streambuf* old = std::cout.rdbuf(captured.rdbuf());
#include "../../docs/snippets/the_tape.inc"
  std::cout.rdbuf(old);
  CHECK(L.item() == 25);
  CHECK(x.grad().item() == 30);
  CHECK(w.grad().item() == -20);
  CHECK(b.grad().item() == -10);
  // The listing printed in the doc is the one the program prints.
  CHECK(read_text(kDocsDir + "/the-tape.md").find(captured.str()) != std::string::npos);
}

TEST_CASE("docs/the-tape.md: watching the backward pass", "[docs][trace]") {
  std::ostringstream captured;
  std::streambuf* old = std::cout.rdbuf(captured.rdbuf());
  {
#include "../../docs/snippets/the_tape_trace.inc"
    std::cout.rdbuf(old);
    CHECK(x.grad().item() == 30);
  }
  // the page shows the trace the program prints, with #2 add receiving 5 + 5
  CHECK(read_text(kDocsDir + "/the-tape.md").find("```text\n" + captured.str() + "```") != std::string::npos);
  CHECK(captured.str().find("#2 add []  dL/dout 10") != std::string::npos);
}

TEST_CASE("docs/the-tape.md: gradcheck", "[docs]") {
  Generator gen(0);
#include "../../docs/snippets/gradcheck.inc"
  CHECK(r.ok);
}
