// test_gradients_docs.cpp — the code of docs/gradients.md compiles and does what the page says:
// a leaf's .grad() sums the passes and reset_grad() clears it; micro-batches of a quarter of the
// loss give the whole batch's step (to 1e-15); an interior tensor keeps no .grad() while grad()
// and a hook see its gradient; a third backward through a graph retained once is refused with the
// message the page quotes; and an optimizer step skips a parameter whose .grad() is undefined.
#include <cmath>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include <catch2/catch.hpp>
#include <tapegrad/tapegrad.hpp>

#include "support/docs.hpp"
#include "support/tensor_diff.hpp"

using namespace tapegrad;
using tapegrad::testing::cpp_blocks;
using tapegrad::testing::kDocsDir;
using tapegrad::testing::max_abs_diff;
using tapegrad::testing::read_text;

TEST_CASE("docs/gradients.md: the blocks are the snippets", "[docs][gradients]") {
  const auto blocks = cpp_blocks(read_text(kDocsDir + "/gradients.md"));
  const std::vector<std::string> files = {"gradients_accumulate", "gradients_micro_batches", "gradients_interior",
                                          "gradients_retain"};
  REQUIRE(blocks.size() == files.size());
  for (std::size_t i = 0; i < files.size(); ++i) {
    INFO("block " << i << " of docs/gradients.md vs docs/snippets/" << files[i] << ".inc");
    CHECK(blocks[i] == read_text(kDocsDir + "/snippets/" + files[i] + ".inc"));
  }
}

TEST_CASE("docs/gradients.md: a leaf's grad sums the passes until reset_grad", "[docs][gradients]") {
#include "../../docs/snippets/gradients_accumulate.inc"
  CHECK(summed == 16);
  CHECK(w.grad().item() == 6);
}

TEST_CASE("docs/gradients.md: four micro-batches of a quarter of the loss step as the whole batch", "[docs][gradients]") {
  manual_seed(5);  // the model's initial weights, drawn again below for the whole batch's twin
#include "../../docs/snippets/gradients_micro_batches.inc"
  manual_seed(5);
  nn::Linear whole(nn::LinearOptions(3, 1).dtype(DType::float64));
  optim::SGD whole_opt(whole.named_parameters(), optim::SGDOptions(0.1));
  mse_loss(whole.forward(xs), ys).backward();
  whole_opt.step();
  const auto mine = model.named_parameters(), theirs = whole.named_parameters();
  REQUIRE(mine.size() == theirs.size());
  for (std::size_t p = 0; p < mine.size(); ++p) {
    INFO(mine[p].first);
    CHECK(max_abs_diff(theirs[p].second.grad(), mine[p].second.grad()) < 1e-15);
    CHECK(max_abs_diff(theirs[p].second, mine[p].second) < 1e-15);
  }
}

TEST_CASE("docs/gradients.md: an interior tensor keeps no grad, grad() and a hook see it", "[docs][gradients]") {
  std::ostringstream captured;
  std::streambuf* old = std::cout.rdbuf(captured.rdbuf());
  {
#include "../../docs/snippets/gradients_interior.inc"
    std::cout.rdbuf(old);
    CHECK(dL_dh.item() == 3);
    CHECK(x.grad().item() == 12);
    CHECK_FALSE(h.grad().defined());
  }
  CHECK(captured.str() == "dL/dh = 3\n");
}

TEST_CASE("docs/gradients.md: a graph retained once is refused a third time, as the page quotes", "[docs][gradients]") {
#include "../../docs/snippets/gradients_retain.inc"
  CHECK(a.grad().item() == Approx(2 * (std::exp(2.0) * 3)).epsilon(1e-6));  // two passes of e^a (a + 1), float32
  REQUIRE_FALSE(refused.empty());
  CHECK(read_text(kDocsDir + "/gradients.md").find("```text\n" + refused + "\n```") != std::string::npos);
}

TEST_CASE("docs/gradients.md: an optimizer step skips an undefined grad, not a zero one", "[docs][gradients]") {
  for (const bool zeros : {false, true}) {
    Tensor w = tensor({1.0}, {1}).requires_grad_();
    optim::AdamW opt({{"w", w}}, optim::AdamOptions(0.1).weight_decay(0.5));
    if (zeros) w.set_grad(zeros_like(w));
    opt.step();
    INFO((zeros ? "a zero grad" : "an undefined grad"));
    if (zeros) CHECK(w.item() < 1.0);  // the weight decay shrank it
    else CHECK(w.item() == 1.0);       // untouched
  }
}
