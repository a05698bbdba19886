// test_data_docs.cpp — the code in docs/data.md compiles and does what the page says.
//
// Each C++ block of the page equals a snippet file in docs/snippets/, which is compiled here
// (#include) and its claims checked. Edit both together.
#include <fstream>
#include <sstream>

#include "data_helpers.hpp"
#include "support/docs.hpp"

using namespace tapegrad;
using tapegrad::testing::cpp_blocks;
using tapegrad::testing::kDocsDir;
using tapegrad::testing::read_text;


TEST_CASE("docs/data.md: the blocks are the snippet files", "[data][docs]") {
  const auto blocks = cpp_blocks(read_text(kDocsDir + "/data.md"));
  REQUIRE(blocks.size() == 4);
  CHECK(blocks[0] == read_text(kDocsDir + "/snippets/data_lm.inc"));
  CHECK(blocks[1] == read_text(kDocsDir + "/snippets/data_loader.inc"));
  CHECK(blocks[2] == read_text(kDocsDir + "/snippets/data_gpt2.inc"));  // tests/data/test_gpt2_tokenizer.cpp
  CHECK(blocks[3] == read_text(kDocsDir + "/snippets/data_seq2seq.inc"));
}

TEST_CASE("docs/data.md: language-model batches", "[data][docs]") {
#include "../../docs/snippets/data_lm.inc"
  CHECK(tokenizer.vocab_size() == 512);
  CHECK(batch.inputs.shape() == Shape{4, 32});
  CHECK(batch.inputs.dtype() == DType::int64);
  const auto xs = batch.inputs.to_vector<std::int64_t>(), ys = batch.targets.to_vector<std::int64_t>();
  for (std::size_t r = 0; r < 4; ++r)
    for (std::size_t t = 0; t + 1 < 32; ++t) CHECK(ys[r * 32 + t] == xs[r * 32 + t + 1]);
  CHECK(val_windows == (stream.size(data::Split::val) - 1) / 32);
}

TEST_CASE("docs/data.md: the loader resumes", "[data][docs]") {
  Generator gen(0);
#include "../../docs/snippets/data_loader.inc"
  CHECK(first.inputs.shape() == Shape{4, 3});
  CHECK(first.targets.shape() == Shape{4});
  CHECK(saved == data::LoaderState{0, 4});
  CHECK(a.indices == b.indices);
  CHECK(a.inputs.to_vector<float>() == b.inputs.to_vector<float>());
}

TEST_CASE("docs/data.md: the translation example", "[data][docs]") {
#include "../../docs/snippets/data_seq2seq.inc"
  CHECK(source == "the happy dog chases the dogs");
  CHECK(target == "inu ureshi ga inu tachi o ouna");
  CHECK(s2s.src.size(0) == 3);
  CHECK(s2s.tgt_out.dtype() == DType::int64);
  // The page's comments quote these two strings.
  const std::string page = read_text(kDocsDir + "/data.md");
  CHECK(page.find("\"" + source + "\"") != std::string::npos);
  CHECK(page.find("\"" + target + "\"") != std::string::npos);
}
