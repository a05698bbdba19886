// test_gpas_vs_torch.cpp — a 2-layer LM with GPAS on Pre-LN (nn/placement/gpas.cpp) against the
// same model in plain PyTorch (tests/reference/make_gpas_reference.py, written as the paper's
// reference code, dandingsky/GPAS, joins its pre_gpas layer), from the reference's weights,
// whose gates are away from 0 so that the stop-gradient acts: the logits, the loss and every
// gradient within 1e-10, then 20 AdamW steps, every loss and parameter within 1e-10
// (reference.hpp's check_adamw_steps says why the key bias within 1e-7 here).
#include <string>

#include "nn/stream_reference_lm.hpp"

using namespace tapegrad;
using namespace tapegrad::testing;

namespace {

constexpr double kTol = 1e-10;

const ReferenceFile& gpas_reference() {
  static const ReferenceFile file(std::string(TAPEGRAD_REFERENCE_DIR) + "/gpas_reference.txt",
                                  "tests/reference/make_gpas_reference.py");
  return file;
}

// make_gpas_reference.py's model: the stream references' LM on the plain stream, its blocks
// GPAS on Pre-LN, from the reference's weights.
std::shared_ptr<nn::TransformerLM> reference_lm() {
  return reference_stream_lm(nn::StreamConfig{}, gpas_reference(), "gpas.", nn::Placement::gpas);
}

}  // namespace

TEST_CASE("A GPAS LM matches PyTorch: logits, loss and every gradient", "[gpas][reference]") {
  auto lm = reference_lm();
  CHECK(check_stream_reference(*lm, gpas_reference(), "gpas.", kTol) == 0);  // the plain stream has none
  std::size_t gates = 0;
  for (const auto& [name, p] : lm->named_parameters()) gates += name.ends_with(".gate");
  CHECK(gates == 2);
}

TEST_CASE("A GPAS LM follows PyTorch's 20 AdamW steps", "[gpas][reference][optim]") {
  auto lm = reference_lm();
  // The key bias's gradient is rounding noise of ~1e-15 here (gpas_reference.txt's grad rows
  // 8..15), against the ~1e-17 that the 1e-8 bound assumes, so its Adam steps are ~lr·1e-15/eps.
  const auto loss = [&] { return reference_stream_loss(*lm, gpas_reference(), "gpas."); };
  check_adamw_steps(*lm, gpas_reference(), "gpas.", loss, kTol, 8, /*setup=*/{}, /*key_bias_tol=*/1e-7);
}
