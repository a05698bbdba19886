// test_depth_parametrization.cpp — Depth-μP and CompleteP (TransformerBlockConfig's
// branch_depth_exponent α and branch_base_depth L_base; optim/depth_scaling.hpp): each update
// enters the stream times m = (L_base/L)^α (blocks against their formula written out), a
// float64 gradcheck of an LM, the placements whose updates pass a norm refuse it by name,
// model files keep it, and depth_scaled_groups scales the blocks' learning rate by r^(α−1) and
// every ε by r^(−α), r = L/L_base.
#include <cmath>
#include <set>
#include <string>

#include <tapegrad/optim/optim.hpp>

#include "io/io_helpers.hpp"
#include "nn/nn_helpers.hpp"
#include "nn/lm_gradcheck.hpp"
#include "support/gradcheck_catch.hpp"

using namespace tapegrad;
using namespace tapegrad::testing;
using Catch::Contains;

namespace {

nn::TransformerLMConfig deep_lm(double exponent, std::int64_t layers = 8, std::int64_t base = 2) {
  nn::TransformerLMConfig c = tiny_lm(7, 6, layers);
  c.block.d_model = 8;
  c.block.d_ff = 16;
  c.block.dtype = DType::float64;
  c.block.branch_depth_exponent = exponent;
  c.block.branch_base_depth = base;
  return c;
}

}  // namespace

TEST_CASE("Depth parametrization: every update enters the stream times (L_base/L)^α", "[residual][depth_mup]") {
  for (double exponent : {0.5, 1.0}) {
    INFO("α = " << exponent);
    manual_seed(3);
    nn::TransformerLM lm(deep_lm(exponent));
    randomize_parameters_(lm, 4, 0.5);
    auto& b = static_cast<nn::TransformerBlock&>(*(*lm.blocks)[5]);
    const double m = std::pow(2.0 / 8.0, exponent);
    CHECK(b.attn_residual->branch == m);
    const Tensor x = param({2, 3, 8}, 5);
    // Pre-LN written out: h = x + m·Attn(N1(x)); y = h + m·FFN(N2(h))
    const Tensor h = add(x, mul(b.attn->forward(b.attn_residual->norm->forward(x)), m));
    const Tensor y = add(h, mul(b.ffn->forward(b.ffn_residual->norm->forward(h)), m));
    CHECK_CLOSE(b.forward(x), y, 1e-14);
  }
  // Post-LN takes it inside its norm: N(x + m·F(x))
  nn::TransformerLMConfig post = deep_lm(1.0, 4, 1);
  post.block.placement = "post";
  nn::TransformerLM lm(post);
  CHECK(static_cast<nn::TransformerBlock&>(*(*lm.blocks)[0]).ffn_residual->branch == 0.25);
  // the standard parametrization records nothing: m is exactly 1
  nn::TransformerLM standard(deep_lm(0.0));
  CHECK(static_cast<nn::TransformerBlock&>(*(*standard.blocks)[0]).attn_residual->branch == 1.0);
}

TEST_CASE("Depth parametrization: an LM passes a float64 gradcheck, and files keep it", "[residual][depth_mup]") {
  nn::TransformerLMConfig c = deep_lm(0.5, 3, 1);
  c.vocab_size = 5, c.max_seq_len = 3;
  manual_seed(6);
  nn::TransformerLM lm(c);
  randomize_parameters_(lm, 7, 0.5);
  CHECK_LM_GRADCHECK(lm, 8);
  CHECK_LM_FILE_ROUND_TRIP(lm);
}

TEST_CASE("Depth parametrization: refused where a norm would undo it, and out of range", "[residual][depth_mup][errors]") {
  for (const char* placement : {"peri", "olmo2", "none"}) {
    nn::TransformerLMConfig c = deep_lm(1.0);
    c.block.placement = placement;
    REQUIRE_THROWS_WITH(c.validate(), Contains("branch_depth_exponent = 1 does not apply to placement " +
                                               std::string(placement)) && Contains("leave it at 0"));
  }
  nn::TransformerLMConfig c = deep_lm(1.5);
  REQUIRE_THROWS_WITH(c.validate(), Contains("branch_depth_exponent must be in [0, 1]") && Contains("got 1.5 and 2"));
  c = deep_lm(1.0, 8, 0);
  REQUIRE_THROWS_WITH(c.validate(), Contains("branch_base_depth >= 1"));
}

TEST_CASE("depth_scaled_groups: the blocks' lr times r^(α−1), every ε times r^(−α)", "[optim][depth_mup]") {
  for (double exponent : {0.5, 1.0}) {
    INFO("α = " << exponent);
    nn::TransformerLM lm(deep_lm(exponent));  // L = 8, L_base = 2: r = 4
    const auto groups = optim::depth_scaled_groups(lm, optim::AdamOptions(1e-2).eps(1e-8).weight_decay(0.1));
    // a tied, bias-free tiny LM has no decayed parameter outside the blocks: the empty group
    // is left out, so each group is judged by what it holds, not by its index
    REQUIRE(groups.size() >= 3);
    std::set<std::string> seen;
    for (const auto& group : groups) {
      REQUIRE(!group.params.empty());
      const bool blocks = group.params.front().first.rfind("blocks.", 0) == 0;
      const bool decays = group.options.weight_decay() != 0.0;
      if (blocks) CHECK(group.options.lr() == Approx(1e-2 * std::pow(4.0, exponent - 1.0)).epsilon(1e-15));
      else CHECK(group.options.lr() == 1e-2);
      CHECK(group.options.eps() == Approx(1e-8 * std::pow(4.0, -exponent)).epsilon(1e-15));
      if (decays) CHECK(group.options.weight_decay() == 0.1);
      for (const auto& [name, p] : group.params) {
        CHECK((name.rfind("blocks.", 0) == 0) == blocks);
        if (decays) CHECK(p.dim() >= 2);  // weight_decay_groups' rule: only matrices decay
        CHECK(seen.insert(name).second);
      }
    }
    CHECK(seen.size() == lm.named_parameters().size());
    optim::AdamW opt(groups);  // an optimizer takes them
    CHECK(opt.num_groups() == groups.size());
  }
  // the standard parametrization: weight_decay_groups' two, as they are
  nn::TransformerLM standard(deep_lm(0.0));
  const auto groups = optim::depth_scaled_groups(standard, optim::AdamOptions(1e-2).weight_decay(0.1));
  REQUIRE(groups.size() == 2);
  CHECK(groups[0].options.lr() == 1e-2);
  CHECK(groups[0].options.eps() == 1e-8);
  // a stack of no block has no depth to scale by: refused, naming it
  nn::TransformerLM empty(deep_lm(1.0, 0));
  REQUIRE_THROWS_WITH(optim::depth_scaled_groups(empty, optim::AdamOptions(1e-2)),
                      Contains("depth_scaled_groups: the model has no block") && Contains("n_layers = 0"));
}
