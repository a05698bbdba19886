// test_summary.cpp — Module::summary and nn::flops_per_token (nn/summary.hpp): the rows and their
// counts, a tied weight counted once, and the FLOPs against the formula worked by hand.
#include <catch2/catch.hpp>
#include <tapegrad/tapegrad.hpp>

using namespace tapegrad;
using Catch::Contains;

namespace {
nn::TransformerLMConfig tiny(bool tied) {
  nn::TransformerLMConfig c;
  c.vocab_size = 50;
  c.max_seq_len = 16;
  c.n_layers = 2;
  c.block.d_model = 32;
  c.block.n_heads = 4;
  c.tie_weights = tied;
  return c;
}
}  // namespace

TEST_CASE("summary: parameters by module, tied weights once", "[nn][summary]") {
  manual_seed(0);
  const nn::TransformerLM model(tiny(true));
  const std::string s = model.summary(1);
  CHECK_THAT(s, Contains("(TransformerLM)"));
  CHECK_THAT(s, Contains("├─ tok_emb (Embedding)"));
  CHECK_THAT(s, Contains("└─ final_norm (LayerNorm)"));
  CHECK_THAT(s, !Contains("0 (TransformerBlock)"));  // depth 1: the blocks' children are not listed
  CHECK_THAT(model.summary(2), Contains("0 (TransformerBlock)"));
  CHECK_THAT(s, Contains("parameters: " + std::to_string(model.num_parameters())));
  CHECK_THAT(s, Contains("1600")); // tok_emb: 50 × 32
}

TEST_CASE("flops_per_token: the matrix products of a transformer, by hand", "[nn][summary]") {
  for (const bool tied : {true, false}) {
    manual_seed(0);
    const nn::TransformerLM model(tiny(tied));
    const double d = 32, V = 50, T = 16, L = 2;
    // per block: qkv 3d², out d², mlp 2·4d² = 12 d² weights, 2 FLOPs each; attention 4·T·d;
    // the head d·V (tied: a product with Eᵀ; untied: a Linear), 2 FLOPs each.
    const double expected = L * (2 * 12 * d * d + 4 * T * d) + 2 * d * V;
    const nn::Flops f = nn::flops_per_token(model, static_cast<std::int64_t>(T));
    CHECK(f.forward == expected);
    CHECK(f.backward == 2 * expected);
    CHECK(f.step() == 3 * expected);
  }
  CHECK(nn::short_count(812544) == "813k");
  CHECK(nn::short_count(21417216) == "21.4M");
  CHECK(nn::short_count(999) == "999");
}
