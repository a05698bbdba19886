// test_gpas.cpp — GPAS on Pre-LN (nn/placement/gpas.cpp): G(u) = u − SiLU(β)·sg(u) after each
// residual add, one β per block. What the generic placement tests cannot see: the stop-gradient
// at β ≠ 0 (a gradcheck can check it only at β = 0: nn_helpers.hpp's close_block_gates_), the
// block starting as Pre-LN's, the gate's place in the state dict and the optimizer's groups,
// and a model file. test_gpas_vs_torch.cpp checks the model against the paper's reference code.
#include <string>

#include <catch2/catch.hpp>
#include <tapegrad/tapegrad.hpp>

#include "io/io_helpers.hpp"
#include "nn/lm_gradcheck.hpp"
#include "nn/nn_helpers.hpp"
#include "support/gradcheck_catch.hpp"

using namespace tapegrad;
using namespace tapegrad::testing;

namespace {

constexpr DType f64 = DType::float64;

nn::TransformerLMConfig gpas_lm(const nn::Placement& placement = nn::Placement::gpas) {
  nn::TransformerLMConfig c = tiny_f64_lm(3);
  c.block.placement = placement;
  return c;
}

nn::TransformerBlock& block(nn::TransformerLM& lm, std::size_t l) {
  return static_cast<nn::TransformerBlock&>(*(*lm.blocks)[l]);
}

// One GPAS block written out from its modules: G(u) = u − SiLU(β)·u', u' = u.detach() when
// stop_gradient, else u itself (then G is a plain scaling, whose gradient GPAS avoids).
Tensor hand_block(nn::TransformerBlock& b, const Tensor& x, bool stop_gradient) {
  const auto G = [&](const Tensor& u) { return sub(u, mul(silu(b.gate), stop_gradient ? u.detach() : u)); };
  const Tensor h = G(add(x, b.attn->forward(b.attn_residual->norm->forward(x))));
  return G(add(h, b.ffn->forward(b.ffn_residual->norm->forward(h))));
}

}  // namespace

TEST_CASE("GPAS: one gate per block, a 0-d parameter at 0, outside weight decay, and the block starts as Pre-LN's",
          "[gpas]") {
  manual_seed(71);
  nn::TransformerLM gpas(gpas_lm());
  manual_seed(71);
  nn::TransformerLM pre(gpas_lm(nn::Placement::pre));
  std::int64_t gates = 0;
  for (const auto& [name, p] : gpas.named_parameters())
    if (name.ends_with(".gate")) {
      INFO(name);
      ++gates;
      CHECK(name == "blocks." + std::to_string(gates - 1) + ".gate");
      CHECK(p.dim() == 0);
      CHECK(p.item() == 0.0);
    }
  CHECK(gates == 3);
  for (const auto& [name, p] : optim::split_for_weight_decay(gpas).decay) CHECK(!name.ends_with(".gate"));
  // SiLU(0) = 0: with Pre-LN's weights, the same logits bit for bit
  CHECK(gpas.named_parameters().size() == pre.named_parameters().size() + 3);
  const Tensor tokens = tensor({1, 2, 3, 4, 5, 6}, {2, 3}, DType::int64);
  CHECK(same_bits(gpas.forward(tokens), pre.forward(tokens)));
}

TEST_CASE("GPAS scales the stream's value and passes its gradient unscaled (the stop-gradient, at β ≠ 0)", "[gpas]") {
  manual_seed(72);
  nn::TransformerLM lm(gpas_lm());
  randomize_parameters_(lm, 73, 0.5);
  nn::TransformerBlock& b = block(lm, 1);
  {
    NoGradGuard no_grad;
    b.gate.fill_(0.8);  // SiLU(0.8) = 0.55: the stream is roughly halved after each add
  }
  const Tensor x = param({2, 3, 8}, 74);
  const Tensor w = param({2, 3, 8}, 75);  // a random loss ⟨w, y⟩
  auto grads = [&](const Tensor& y) {
    return grad({sum(mul(y, w))}, with_parameters({x}, b));
  };
  const Tensor y = b.forward(x);
  CHECK_CLOSE(y, hand_block(b, x, true), 1e-14);
  const TensorList got = grads(y), want = grads(hand_block(b, x, true)), scaled = grads(hand_block(b, x, false));
  REQUIRE(got.size() == want.size());
  double unlike_scaling = 0;  // how far the plain scaling's gradient is from GPAS's
  for (std::size_t i = 0; i < got.size(); ++i) {
    CHECK_CLOSE(got[i], want[i], 1e-13);
    unlike_scaling = std::max(unlike_scaling, max_abs_diff(got[i], scaled[i]));
  }
  CHECK(unlike_scaling > 1e-2);
}

TEST_CASE("A GPAS LM passes a float64 gradcheck, at β = 0 where its stop-gradient is inert", "[gpas][gradcheck]") {
  manual_seed(76);
  nn::TransformerLM lm(gpas_lm());
  randomize_parameters_(lm, 77, 0.5);
  close_block_gates_(lm);
  CHECK_LM_GRADCHECK(lm, 78);
}

TEST_CASE("A GPAS LM round-trips through a model file, gates included", "[gpas][io]") {
  manual_seed(79);
  nn::TransformerLM lm(gpas_lm());
  randomize_parameters_(lm, 80, 0.5);
  CHECK_LM_FILE_ROUND_TRIP(lm);
}
