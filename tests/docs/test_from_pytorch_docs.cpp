// test_from_pytorch_docs.cpp — the program of docs/from-pytorch.md is the snippet, compiles,
// trains and classifies the validation split better than chance by far; the page's table names
// only what the library has (each row's tapegrad spelling compiles below).
#include <iostream>
#include <sstream>

#include <catch2/catch.hpp>
#include <tapegrad/data/data.hpp>
#include <tapegrad/tapegrad.hpp>

#include "support/docs.hpp"

using namespace tapegrad;
using tapegrad::testing::cpp_blocks;
using tapegrad::testing::kDocsDir;
using tapegrad::testing::read_text;

TEST_CASE("docs/from-pytorch.md: the block is the snippet", "[docs][from_pytorch]") {
  const auto blocks = cpp_blocks(read_text(kDocsDir + "/from-pytorch.md"));
  REQUIRE(blocks.size() == 1);
  CHECK(blocks[0] == read_text(kDocsDir + "/snippets/from_pytorch_loop.inc"));
}

TEST_CASE("docs/from-pytorch.md: the classifier trains, and prints as PyTorch does", "[docs][from_pytorch]") {
  std::ostringstream captured;
  std::streambuf* old = std::cout.rdbuf(captured.rdbuf());
  {
#include "../../docs/snippets/from_pytorch_loop.inc"
    std::cout.rdbuf(old);
    INFO(captured.str());
    CHECK(acc >= 0.8);  // 3 classes: chance is a third
    CHECK(captured.str().find("tensor([") != std::string::npos);
    CHECK(captured.str().find("grad_fn") == std::string::npos);  // under NoGradGuard
  }
  std::cout.rdbuf(old);
}

TEST_CASE("docs/from-pytorch.md: each row of the table compiles as written", "[docs][from_pytorch]") {
  auto model = std::make_shared<nn::Sequential>(std::make_shared<nn::Linear>(2, 4), std::make_shared<nn::GELU>(),
                                                std::make_shared<nn::SiLU>(), std::make_shared<nn::Tanh>());
  model->to(DType::float64);
  const Tensor x = randn({3, 4}, DType::float64);
  CHECK(x.slice(1, 1, 3).shape() == Shape{3, 2});
  CHECK(x.sum({1}, true).shape() == Shape{3, 1});
  const auto [values, indices] = topk(x, 2);
  CHECK(indices.dtype() == DType::int64);
  CHECK(scatter_add(zeros({3, 4}, DType::float64), 1, indices, values).shape() == Shape{3, 4});
  std::ostringstream os;
  os << *model;
  CHECK(os.str().back() == '\n');
}
