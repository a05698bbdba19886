// test_gpas_vs_torch.cpp — a 2-layer LM with GPAS on Pre-LN (nn/placement/gpas.cpp) against the
// same model in plain PyTorch (tests/reference/make_gpas_reference.py, written as the paper's
// reference code, dandingsky/GPAS, joins its pre_gpas layer), from the reference's weights,
// whose gates are away from 0 so that the stop-gradient acts: the logits, the loss and every
// gradient within 1e-10, then 20 AdamW steps, every loss and parameter within 1e-10
// (reference.hpp's check_adamw_steps says why the key bias within 1e-7 here).
#include <string>

#include <catch2/catch.hpp>
#include <tapegrad/tapegrad.hpp>

#include "support/reference.hpp"

using namespace tapegrad;
using tapegrad::testing::ReferenceFile;

namespace {

constexpr DType f64 = DType::float64;

const ReferenceFile& gpas_reference() {
  static const ReferenceFile file(std::string(TAPEGRAD_REFERENCE_DIR) + "/gpas_reference.txt",
                                  "tests/reference/make_gpas_reference.py");
  return file;
}

// make_gpas_reference.py's model: make_nn_reference's LM (d_model 8, 2 heads, d_ff 16, exact
// GELU, tied head), GPAS on Pre-LN with LayerNorm, from the reference's weights.
std::shared_ptr<nn::TransformerLM> reference_lm() {
  nn::TransformerLMConfig c;
  c.vocab_size = 11;
  c.max_seq_len = 8;
  c.n_layers = 2;
  c.tie_weights = true;
  c.block = {.d_model = 8, .n_heads = 2, .d_ff = 16, .activation = nn::Activation::gelu,
             .placement = nn::Placement::gpas, .dtype = f64};
  auto lm = std::make_shared<nn::TransformerLM>(c);
  tapegrad::testing::load_reference_parameters(*lm, gpas_reference(), "gpas.param.", f64);
  return lm;
}

Tensor reference_loss(nn::TransformerLM& lm) {
  const Tensor tokens = gpas_reference().get("gpas.tokens"), targets = gpas_reference().get("gpas.targets");
  return cross_entropy(lm.forward(tokens).reshape({tokens.numel(), 11}), targets.reshape({targets.numel()}));
}

}  // namespace

TEST_CASE("A GPAS LM matches PyTorch: logits, loss and every gradient", "[gpas][reference]") {
  const ReferenceFile& ref = gpas_reference();
  auto lm = reference_lm();
  CHECK_CLOSE("logits", lm->forward(ref.get("gpas.tokens")), ref.get("gpas.logits"), 1e-10, 0.0);
  const Tensor loss = reference_loss(*lm);
  CHECK_CLOSE("loss", loss, ref.get("gpas.loss"), 1e-10, 0.0);
  loss.backward();
  std::size_t gates = 0;
  for (const auto& [name, p] : lm->named_parameters()) {
    CHECK_CLOSE("grad " + name, p.grad(), ref.get("gpas.grad." + name), 1e-10, 0.0);
    gates += name.ends_with(".gate");
  }
  CHECK(gates == 2);
}

TEST_CASE("A GPAS LM follows PyTorch's 20 AdamW steps", "[gpas][reference][optim]") {
  auto lm = reference_lm();
  // The key bias's gradient is rounding noise of ~1e-15 here (gpas_reference.txt's grad rows
  // 8..15), against the ~1e-17 that the 1e-8 bound assumes, so its Adam steps are ~lr·1e-15/eps.
  tapegrad::testing::check_adamw_steps(*lm, gpas_reference(), "gpas.", [&] { return reference_loss(*lm); }, 1e-10, 8,
                                       /*setup=*/{}, /*key_bias_tol=*/1e-7);
}
