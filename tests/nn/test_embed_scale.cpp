// test_embed_scale.cpp — the token embedding's multiplier s (TransformerLMConfig::embed_scale):
// h0 = s·E[tokens], fixed or learned, checked against the same model with E scaled by hand, by
// a float64 gradcheck, through a model file, and refused where it is not a positive number.
#include <catch2/catch.hpp>

#include <cmath>
#include <string>

#include <tapegrad/tapegrad.hpp>

#include "io/io_helpers.hpp"
#include "nn/lm_gradcheck.hpp"
#include "nn/nn_helpers.hpp"
#include "support/gradcheck_catch.hpp"

using namespace tapegrad;
using Catch::Contains;
using tapegrad::testing::max_abs_diff;
using tapegrad::testing::randomize_parameters_;
using tapegrad::testing::ScratchDir;

namespace {
// An untied LM with rotary positions: its logits read E only through h0, so scaling E by s by
// hand is the same model as embed_scale = s.
nn::TransformerLMConfig untied_rope_lm(double scale, bool learnable = false) {
  nn::TransformerLMConfig c = tapegrad::testing::tiny_lm(9, 6, 2);
  c.tie_weights = false;
  c.block.rope = true;
  c.embed_scale = scale;
  c.embed_scale_learnable = learnable;
  return c;
}
}  // namespace

TEST_CASE("embed_scale: h0 = s times the token embedding, fixed or learned, is the model with E scaled by s", "[transformer][embed_scale]") {
  const double s = std::sqrt(16.0);  // √d_model
  const Tensor tokens = tensor({1, 2, 3, 4, 5, 6, 7, 8}, {2, 4}, DType::int64);
  for (bool learnable : {false, true}) {
    INFO("learnable " << learnable);
    manual_seed(5);
    nn::TransformerLM scaled(untied_rope_lm(s, learnable));
    manual_seed(5);
    nn::TransformerLM by_hand(untied_rope_lm(1.0));
    {
      NoGradGuard no_grad;
      by_hand.tok_emb->weight.copy_(mul(by_hand.tok_emb->weight, s));
    }
    CHECK(max_abs_diff(scaled.forward(tokens), by_hand.forward(tokens)) < 1e-5);
    CHECK(scaled.embed_scale.defined() == learnable);
    CHECK(static_cast<bool>(scaled.named_parameters().size() == by_hand.named_parameters().size() + (learnable ? 1 : 0)));
  }
  // the learned s starts at embed_scale, is 0-d, and gets a gradient
  nn::TransformerLM lm(untied_rope_lm(s, true));
  REQUIRE(lm.embed_scale.defined());
  CHECK(lm.embed_scale.dim() == 0);
  CHECK(lm.embed_scale.item() == s);
  sum(lm.forward(tokens)).backward();
  REQUIRE(lm.embed_scale.grad().defined());
  CHECK(lm.embed_scale.grad().item() != 0);
  // 0-d: outside weight decay, as the norms' gains
  const optim::WeightDecaySplit split = optim::split_for_weight_decay(lm);
  bool in_no_decay = false;
  for (const auto& [name, p] : split.no_decay) in_no_decay = in_no_decay || name == "embed_scale";
  CHECK(in_no_decay);
}

TEST_CASE("embed_scale: a float64 gradcheck with s learned, and the model file keeps s", "[transformer][embed_scale]") {
  nn::TransformerLMConfig c = tapegrad::testing::tiny_lm(5, 3, 1);
  c.block.dtype = DType::float64;
  c.embed_scale = 2.5;
  c.embed_scale_learnable = true;
  manual_seed(3);
  nn::TransformerLM lm(c);
  randomize_parameters_(lm, 4, 0.5);
  CHECK_LM_GRADCHECK(lm, 5);
  CHECK_LM_FILE_ROUND_TRIP(lm);  // the learned s (2.5 moved by randomize_parameters_) with the weights
}

TEST_CASE("embed_scale: refused unless a positive number, naming √d_model", "[transformer][embed_scale][errors]") {
  for (double bad : {0.0, -1.0, std::nan(""), HUGE_VAL}) {
    nn::TransformerLMConfig c = tapegrad::testing::tiny_lm();
    c.embed_scale = bad;
    REQUIRE_THROWS_WITH(c.validate(), Contains("embed_scale must be a positive number") && Contains("√d_model = 4"));
  }
  // a Hugging Face GPT-2 has no such multiplier: the export refuses it
  nn::TransformerLMConfig g = nn::gpt2_config({16, 8, 1, 16, 2, 0});
  g.embed_scale = 4;
  nn::TransformerLM model(g);
  ScratchDir dir;
  REQUIRE_THROWS_WITH(io::save_hf_gpt2(model, dir.file("hf")), Contains("not a GPT-2 design"));
}
