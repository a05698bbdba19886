// test_custom_module_docs.cpp — the code of docs/custom-module.md compiles and does what the
// page says: the dotted names, the state dict's keys, hooks through a call and not through
// forward(), the two-input module, and to(dtype) down to a float64 gradcheck of the whole module.
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include <catch2/catch.hpp>
#include <tapegrad/tapegrad.hpp>

#include "support/docs.hpp"
#include "support/gradcheck_catch.hpp"

using namespace tapegrad;
using tapegrad::testing::cpp_blocks;
using tapegrad::testing::kDocsDir;
using tapegrad::testing::read_text;

namespace {
#include "../../docs/snippets/custom_module_class.inc"
}  // namespace

TEST_CASE("docs/custom-module.md: the blocks are the snippets", "[docs][nn]") {
  const auto blocks = cpp_blocks(read_text(kDocsDir + "/custom-module.md"));
  REQUIRE(blocks.size() == 2);
  CHECK(blocks[0] == read_text(kDocsDir + "/snippets/custom_module_class.inc"));
  CHECK(blocks[1] == read_text(kDocsDir + "/snippets/custom_module_use.inc"));
}

TEST_CASE("docs/custom-module.md: names, state dict, hooks, summary, to(dtype)", "[docs][nn]") {
  std::ostringstream captured;
  std::streambuf* old = std::cout.rdbuf(captured.rdbuf());
#include "../../docs/snippets/custom_module_use.inc"
  std::cout.rdbuf(old);
  // The names the page lists, as the program printed them.
  CHECK(captured.str().rfind("scale [2]\nfc1.weight [8, 4]\nfc1.bias [8]\nfc2.weight [2, 8]\nfc2.bias [2]\n", 0) == 0);
  std::vector<std::string> keys;
  for (const auto& [name, _] : sd) keys.push_back(name);
  CHECK(keys == std::vector<std::string>{"scale", "batches", "fc1.weight", "fc1.bias", "fc2.weight", "fc2.bias"});
  CHECK(calls == 1);
  CHECK(y.shape() == Shape{3, 2});
  CHECK(captured.str().find("TwoLayer") != std::string::npos);  // the summary
  // Two training calls counted in the buffer; all in float64 now, and the handles see it.
  CHECK(model->batches.item() == 2);
  CHECK(model->fc1->weight.dtype() == DType::float64);
  CHECK(model->named_parameters()[0].second.dtype() == DType::float64);
  CHECK(model->batches.dtype() == DType::float64);
  model->eval();
  CHECK_GRADCHECK([&](const TensorList& in) { return (*model)(in[0]); },
                  {randn({2, 4}, gen, DType::float64).requires_grad_()});

  Gate gate;
  int gate_calls = 0;
  gate.register_forward_pre_hook([&](nn::Module&, TensorList& in) {
    ++gate_calls;
    in[1] = zeros({2});  // sigmoid(0) = 1/2
  });
  CHECK(gate(ones({2}), full({2}, 5.0)).to_vector() == std::vector<double>{0.5, 0.5});
  CHECK(gate_calls == 1);
}
