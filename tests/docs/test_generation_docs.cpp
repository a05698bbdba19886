// test_generation_docs.cpp — the code of docs/generation.md compiles and does what the page
// says: generate() with nucleus sampling and stop tokens past a rope model's max_seq_len, and
// the loop written out with forward_cached gives generate()'s greedy tokens.
#include <algorithm>
#include <iostream>
#include <vector>

#include <catch2/catch.hpp>
#include <tapegrad/tapegrad.hpp>

#include "support/docs.hpp"

using namespace tapegrad;
using tapegrad::testing::cpp_blocks;
using tapegrad::testing::kDocsDir;
using tapegrad::testing::read_text;

TEST_CASE("docs/generation.md: the blocks are the snippets", "[docs][generate]") {
  const auto blocks = cpp_blocks(read_text(kDocsDir + "/generation.md"));
  const std::vector<std::string> files = {"generation_generate", "generation_cached"};
  REQUIRE(blocks.size() == files.size());
  for (std::size_t i = 0; i < files.size(); ++i) {
    INFO("block " << i << " of docs/generation.md vs docs/snippets/" << files[i] << ".inc");
    CHECK(blocks[i] == read_text(kDocsDir + "/snippets/" + files[i] + ".inc"));
  }
}

TEST_CASE("docs/generation.md: generate, and the cached loop by hand", "[docs][generate]") {
#include "../../docs/snippets/generation_generate.inc"
  REQUIRE(out.size(0) == 2);
  CHECK(out.size(1) > 3);
  CHECK(out.size(1) <= 23);  // past max_seq_len 8: rope
  const std::vector<std::int64_t> rows = out.to_vector<std::int64_t>();
  for (std::int64_t b = 0; b < 2; ++b) {  // after a row's first 0 (its stop), only 0s
    const auto row = rows.begin() + b * out.size(1);
    const auto stop = std::find(row + 3, row + out.size(1), 0);
    CHECK(std::all_of(stop, row + out.size(1), [](std::int64_t t) { return t == 0; }));
  }
  {
#include "../../docs/snippets/generation_cached.inc"
    nn::GenerateOptions greedy;
    greedy.temperature = 0;
    CHECK(seq == model.generate(tensor({3, 1, 4}, {1, 3}, DType::int64), 9, greedy).to_vector<std::int64_t>());
  }
}
