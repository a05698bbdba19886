// test_forward_mode_docs.cpp — the code of docs/forward-mode.md compiles and does what the page
// says: the dual numbers give the value and the derivative of x² + sin x; jvp's J·v equals the
// Jacobian (built by backward passes) times v; the gradient of a loss by three jvps equals the
// one backward's (1e-14); forward over reverse equals reverse over reverse (1e-12).
#include <cmath>
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

namespace forward_mode_page {
#include "../../docs/snippets/forward_mode_dual.inc"
}  // namespace forward_mode_page

TEST_CASE("docs/forward-mode.md: the blocks are the snippets", "[docs][forward_ad]") {
  const auto blocks = cpp_blocks(read_text(kDocsDir + "/forward-mode.md"));
  const std::vector<std::string> files = {"forward_mode_dual", "forward_mode_jvp", "forward_mode_cost", "forward_mode_hvp"};
  REQUIRE(blocks.size() == files.size());
  for (std::size_t i = 0; i < files.size(); ++i) {
    INFO("block " << i << " of docs/forward-mode.md vs docs/snippets/" << files[i] << ".inc");
    CHECK(blocks[i] == read_text(kDocsDir + "/snippets/" + files[i] + ".inc"));
  }
}

TEST_CASE("docs/forward-mode.md: dual numbers carry the derivative", "[docs][forward_ad]") {
  const forward_mode_page::Dual y = forward_mode_page::f({2.0, 1.0});
  CHECK(y.v == Approx(4 + std::sin(2.0)).epsilon(1e-15));
  CHECK(y.d == Approx(4 + std::cos(2.0)).epsilon(1e-15));
}

TEST_CASE("docs/forward-mode.md: jvp, the cost of a gradient, forward over reverse", "[docs][forward_ad]") {
#include "../../docs/snippets/forward_mode_jvp.inc"
  // J·v against the Jacobian's rows, one backward pass each
  const Tensor leaf_x = x.detach().requires_grad_();
  const Tensor out = f({leaf_x});
  for (std::int64_t j = 0; j < 4; ++j) {
    Tensor e = zeros({4}, DType::float64);
    e.data<double>()[j] = 1.0;
    const Tensor row = grad({out}, {leaf_x}, {e}, {.retain_graph = true})[0];
    CHECK(dy.to_vector()[static_cast<std::size_t>(j)] == Approx(sum(mul(row, v)).item()).epsilon(1e-14));
  }
  CHECK(max_abs_diff(y, out.detach()) == 0);
#include "../../docs/snippets/forward_mode_cost.inc"
  for (std::size_t i = 0; i < 3; ++i) CHECK(by_forward[i] == Approx(by_reverse.to_vector()[i]).epsilon(1e-14));
#include "../../docs/snippets/forward_mode_hvp.inc"
  CHECK(max_abs_diff(hv_forward, hv_reverse) < 1e-12);
}
