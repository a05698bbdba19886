// test_custom_block_docs.cpp — the code of docs/custom-block.md compiles and does what the
// page says: a placement written outside the library registers by name, trains, evaluates,
// generates on its KV cache (the same tokens as recomputing the whole sequence), and comes
// back from its model file with the same numbers; it is refused by name where it cannot go.
// The registration lasts as long as the process: ctest runs each case (each file, under the
// sanitizers) in a process of its own, so the library's placement tests never meet it.
#include <filesystem>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include <catch2/catch.hpp>
#include <tapegrad/tapegrad.hpp>

#include "io/io_helpers.hpp"
#include "support/docs.hpp"
#include "support/tensor_diff.hpp"

using namespace tapegrad;
using Catch::Contains;
using tapegrad::testing::cpp_blocks;
using tapegrad::testing::kDocsDir;
using tapegrad::testing::max_abs_diff;
using tapegrad::testing::read_text;

namespace {
#include "../../docs/snippets/custom_block_formula.inc"
}  // namespace

TEST_CASE("docs/custom-block.md: the blocks are the snippets", "[docs][nn][stream]") {
  const auto blocks = cpp_blocks(read_text(kDocsDir + "/custom-block.md"));
  REQUIRE(blocks.size() == 3);
  CHECK(blocks[0] == read_text(kDocsDir + "/snippets/custom_block_formula.inc"));
  CHECK(blocks[1] == read_text(kDocsDir + "/snippets/custom_block_use.inc"));
  CHECK(blocks[2] == read_text(kDocsDir + "/snippets/custom_block_study.inc"));  // tests/docs/custom_block_study.cpp
}

TEST_CASE("docs/custom-block.md: a block of a program's own trains, generates, saves and loads", "[docs][nn][stream]") {
  tapegrad::testing::ScratchDir dir;
  const std::filesystem::path here = std::filesystem::current_path();
  std::filesystem::current_path(dir.path());
  std::ostringstream captured;
  std::streambuf* old = std::cout.rdbuf(captured.rdbuf());
#include "../../docs/snippets/custom_block_use.inc"
  std::cout.rdbuf(old);
  std::filesystem::current_path(here);

  // what the page says it prints
  INFO(captured.str());
  CHECK(captured.str().rfind("validation loss 0.00", 0) == 0);  // the page: "0.00…"
  CHECK(val_loss < 0.1);
  CHECK_THAT(captured.str(), Contains("; 0 1 2 continued: 0 1 2 3 4 5 6 7\n"));
  // the block is the formula: each block's output, by hand
  auto& block = static_cast<nn::TransformerBlock&>(*(*lm->blocks)[0]);
  const Tensor h = randn({1, 5, 32});
  {
    NoGradGuard no_grad;
    const Tensor by_hand = h + block.attn->forward(block.attn_residual->norm->forward(h)) +
                           block.ffn->forward(block.ffn_residual->norm->forward(h));
    CHECK(max_abs_diff(block.forward(h), by_hand) < 1e-6);
  }
  // the file names it, and gives back the same model
  CHECK(loaded->config.block.placement.name == "parallel");
  CHECK(loaded->final_norm != nullptr);
  CHECK(max_abs_diff(loaded->forward(x), lm->forward(x)) == 0.0);
  // registered once; the Hugging Face export has no such block
  REQUIRE_THROWS_WITH(register_parallel_block(), Contains("a placement named 'parallel' is already registered"));
  REQUIRE_THROWS_WITH(io::save_hf_gpt2(*lm, dir.file("hf")), Contains("save_hf_gpt2: the model is not a GPT-2 design"));
  // a seq2seq decoder would skip its cross-attention: refused by the formula
  nn::Seq2SeqConfig s2s;
  s2s.src_vocab_size = s2s.tgt_vocab_size = 8;
  s2s.max_seq_len = 4;
  s2s.n_encoder_layers = s2s.n_decoder_layers = 1;
  s2s.block.d_model = 8;
  s2s.block.n_heads = 2;
  s2s.block.placement = "parallel";
  nn::Seq2SeqTransformer seq2seq(s2s);
  const Tensor src = Tensor::from_vector(std::vector<std::int64_t>{1, 2, 3}, {1, 3});
  REQUIRE_THROWS_WITH(seq2seq.forward(src, src), Contains("parallel: a decoder-only block"));
}
