// test_adding_an_op_docs.cpp — docs/adding-an-op.md's example op is the code the op catalogue
// checks, and the page's rules are the ones that make it pass.
//
// The page's one C++ block equals docs/snippets/adding_an_op.inc, which
// tests/autograd/test_op_catalog.cpp compiles into its table: gradcheck and gradgradcheck in
// float64, full Jacobians and fast mode. Here: the block is the file, and the page's rule
// matters: the same op with its input captured detached gets a wrong second derivative.
#include <cmath>
#include <cstdint>
#include <string>

#include "support/docs.hpp"
#include "support/gradcheck_catch.hpp"

using namespace tapegrad;
namespace tt = tapegrad::testing;

namespace {

// The example's backward with its input captured detached: the same first derivative, but
// under create_graph sigmoid(x) no longer depends on x.
Tensor swish_input_detached(const Tensor& x) {
  Tensor out = x.detach() * sigmoid(x.detach());
  record(out, "swish_input_detached", {x}, [x = x.detach(), y = out.detach()](const Tensor& dout) -> TensorList {
    const Tensor s = sigmoid(x);
    return {dout * (s + saved_output(y) * (1.0 - s))};
  }, DoubleBackward::supported);
  return out;
}

}  // namespace

TEST_CASE("docs/adding-an-op.md: the example is the op the catalogue checks", "[docs]") {
  const auto blocks = tt::cpp_blocks(tt::read_text(tt::kDocsDir + "/adding-an-op.md"));
  REQUIRE(blocks.size() == 1);
  CHECK(blocks[0] == tt::read_text(tt::kDocsDir + "/snippets/adding_an_op.inc"));
  // The catalogue compiles that file and lists the op.
  const std::string catalogue = tt::read_text(tt::kRepoRoot + "/tests/autograd/test_op_catalog.cpp");
  CHECK(catalogue.find("#include \"../../docs/snippets/adding_an_op.inc\"") != std::string::npos);
  CHECK(catalogue.find("return swish(in[0]);") != std::string::npos);
}

TEST_CASE("docs/adding-an-op.md: an input captured detached breaks the second derivative", "[docs][gradgradcheck]") {
  const GradcheckFn detached = [](const TensorList& in) { return swish_input_detached(in[0]); };
  CHECK_GRADCHECK(detached, {tt::param({2, 3}, 11)});  // the first derivative is right
  const GradcheckResult twice = gradgradcheck(detached, {tt::param({2, 3}, 11)});
  CHECK_FALSE(twice.ok);
  CHECK_THAT(twice.report, Catch::Contains("gradgradcheck failed"));
}

TEST_CASE("docs/adding-an-op.md: a backward must return one gradient per input", "[docs]") {
  // A backward that returns none: the engine names the op and refuses.
  Tensor x = tensor({1, 2}, {2}, DType::float64).requires_grad_();
  const auto no_gradient = [&] {  // a fresh graph for each check
    Tensor y = x.detach().clone();
    record(y, "no_gradient", {x}, [](const Tensor&) -> TensorList { return {}; });
    return y.sum();
  };
  CHECK_THROWS_AS(no_gradient().backward(), GraphError);
  CHECK_THROWS_WITH(no_gradient().backward(), Catch::Contains("backward of 'no_gradient' returned 0 gradients for 1 inputs"));
}
