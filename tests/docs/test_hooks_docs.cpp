// test_hooks_docs.cpp — the code of docs/hooks.md compiles and does what the page says: the
// hooks' per-block gradient norms equal nn::block_grad_norms after backward, and the forward
// hooks see every block's output and, during backward, the gradient that reaches it.
#include <cmath>
#include <iostream>
#include <map>
#include <string>
#include <vector>

#include <catch2/catch.hpp>
#include <tapegrad/tapegrad.hpp>

#include "support/docs.hpp"

using namespace tapegrad;
using tapegrad::testing::cpp_blocks;
using tapegrad::testing::kDocsDir;
using tapegrad::testing::read_text;

TEST_CASE("docs/hooks.md: the blocks are the snippets", "[docs][hooks]") {
  const auto blocks = cpp_blocks(read_text(kDocsDir + "/hooks.md"));
  const std::vector<std::string> files = {"hooks_grad_norms", "hooks_activations"};
  REQUIRE(blocks.size() == files.size());
  for (std::size_t i = 0; i < files.size(); ++i) {
    INFO("block " << i << " of docs/hooks.md vs docs/snippets/" << files[i] << ".inc");
    CHECK(blocks[i] == read_text(kDocsDir + "/snippets/" + files[i] + ".inc"));
  }
}

TEST_CASE("docs/hooks.md: per-layer gradient norms and activations, by hooks", "[docs][hooks]") {
#include "../../docs/snippets/hooks_grad_norms.inc"
  const std::vector<double> expected = nn::block_grad_norms(*model.blocks);
  REQUIRE(squared.size() == 4);
  std::size_t l = 0;
  for (const auto& [block, s] : squared) {
    INFO(block);
    CHECK(block == "blocks." + std::to_string(l));
    CHECK(std::sqrt(s) == Approx(expected[l]).epsilon(1e-5));
    ++l;
  }
  // removed: another backward adds nothing
  const auto before = squared;
  cross_entropy(model.forward(tokens).reshape({8, 32}), targets).backward();
  CHECK(squared == before);

#include "../../docs/snippets/hooks_activations.inc"
  REQUIRE(rms.size() == 4);
  REQUIRE(grad_rms.size() == 4);
  for (double v : rms) CHECK((v > 0 && std::isfinite(v)));
  for (double v : grad_rms) CHECK((v > 0 && std::isfinite(v)));
}
