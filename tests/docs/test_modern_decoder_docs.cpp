// test_modern_decoder_docs.cpp — the code of docs/modern-decoder.md compiles and does what the
// page says: the block written from its parts equals a TransformerBlock of the LLaMA
// configuration with the same weights, and the preset has the widths and parts it lists.
#include <iostream>
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

TEST_CASE("docs/modern-decoder.md: the blocks are the snippets", "[docs][llama]") {
  const auto blocks = cpp_blocks(read_text(kDocsDir + "/modern-decoder.md"));
  const std::vector<std::string> files = {"modern_decoder_parts", "modern_decoder_preset"};
  REQUIRE(blocks.size() == files.size());
  for (std::size_t i = 0; i < files.size(); ++i) {
    INFO("block " << i << " of docs/modern-decoder.md vs docs/snippets/" << files[i] << ".inc");
    CHECK(blocks[i] == read_text(kDocsDir + "/snippets/" + files[i] + ".inc"));
  }
}

TEST_CASE("docs/modern-decoder.md: the block from its parts is the LLaMA block", "[docs][llama]") {
#include "../../docs/snippets/modern_decoder_parts.inc"
  CHECK(ffn.options.hidden() == 96);
  nn::ModelShape shape;
  shape.d_model = d;
  shape.n_heads = heads;
  shape.n_kv_heads = kv_heads;
  nn::TransformerBlockConfig c = nn::llama_config(shape, 32).block_config();
  nn::TransformerBlock reference(c);
  // the same weights, by name: attn.* from attn, ffn.* from ffn, the two norms
  NoGradGuard no_grad;
  for (const auto& [name, p] : reference.named_parameters()) {
    const nn::Module* from = name.rfind("attn.", 0) == 0 ? static_cast<nn::Module*>(&attn)
                             : name.rfind("ffn.", 0) == 0 ? static_cast<nn::Module*>(&ffn)
                             : name.rfind("attn_residual", 0) == 0 ? static_cast<nn::Module*>(&attn_norm)
                                                                   : static_cast<nn::Module*>(&ffn_norm);
    const std::string local = name.substr(name.find('.') + 1);  // "qkv.weight", "norm.weight" -> "weight"
    const std::string key = name.rfind("_residual.norm.") != std::string::npos ? local.substr(local.find('.') + 1) : local;
    bool found = false;
    for (const auto& [n, q] : from->named_parameters())
      if (n == key) Tensor(p).copy_(q), found = true;  // a handle to the same storage
    INFO(name);
    REQUIRE(found);
  }
  CHECK(max_abs_diff(reference.forward(x), y) < 1e-6);
  CHECK(max_abs_diff(reference.forward(x), x) > 1e-3);
}

TEST_CASE("docs/modern-decoder.md: the preset", "[docs][llama]") {
#include "../../docs/snippets/modern_decoder_preset.inc"
  CHECK(config.block.d_ff == 512);
  CHECK_FALSE(lm.pos_emb);
  CHECK(lm.blocks->at<nn::TransformerBlock>(0)->attn->q_norm);
  CHECK(lm.blocks->at<nn::TransformerBlock>(0)->attn->qkv->weight.size(0) == 128 + 2 * 2 * 32);
}
