// study::make_optimizer (examples/studies/common/settings.hpp): a language model under a depth
// parametrization gets optim::depth_scaled_groups (its blocks' lr follows the depth), every
// other model the plain weight-decay groups, and SGD is refused under a depth parametrization
// with a message that names the flag.
#include <catch2/catch.hpp>

#include <cmath>

#include "common/settings.hpp"

using namespace tapegrad;
using Catch::Matchers::Contains;

namespace {

nn::TransformerLMConfig lm_config(double exponent) {
  nn::TransformerLMConfig c;
  c.vocab_size = 7, c.max_seq_len = 4, c.n_layers = 8;
  c.block.d_model = 8, c.block.n_heads = 2, c.block.d_ff = 16;
  c.block.branch_depth_exponent = exponent;
  c.block.branch_base_depth = 2;  // r = L / L_base = 4
  return c;
}

// The lr of the group that holds the parameter `name`.
double lr_of(const optim::Optimizer& opt, const std::string& name) {
  for (std::size_t g = 0; g < opt.num_groups(); ++g)
    for (const auto& [n, p] : opt.group_params(g))
      if (n == name) return opt.lr(g);
  FAIL("no group holds " << name);
  return 0;
}

}  // namespace

TEST_CASE("study::make_optimizer: Depth-muP's blocks learn at lr r^(alpha-1), the rest at lr", "[studies][depth_mup]") {
  study::Training t;
  t.lr = 1e-2;
  for (const char* optimizer : {"adam", "adamw"}) {
    t.optimizer = optimizer;
    INFO(optimizer);
    nn::TransformerLM scaled(lm_config(0.5));
    const auto a = study::make_optimizer(scaled, t);
    CHECK(lr_of(*a, "blocks.0.attn.qkv.weight") == Approx(1e-2 / 2).epsilon(1e-15));
    CHECK(lr_of(*a, "tok_emb.weight") == 1e-2);
    nn::TransformerLM plain(lm_config(0.0));
    const auto b = study::make_optimizer(plain, t);
    CHECK(lr_of(*b, "blocks.0.attn.qkv.weight") == 1e-2);
  }
}

TEST_CASE("study::make_optimizer: SGD under a depth parametrization is refused, naming the flag", "[studies][depth_mup][errors]") {
  study::Training t;
  t.optimizer = "sgd";
  nn::TransformerLM scaled(lm_config(1.0));
  CHECK_THROWS_WITH(study::make_optimizer(scaled, t),
                    Contains("--optimizer sgd") && Contains("branch exponent 1") && Contains("use adam or adamw"));
  nn::TransformerLM plain(lm_config(0.0));
  CHECK_NOTHROW(study::make_optimizer(plain, t));  // SGD itself is fine without one
}
