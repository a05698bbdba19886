// test_hc_vs_torch.cpp — 2-layer Pre-LN TransformerLMs on a stream widened to n = 3 copies by
// Hyper-Connections (dynamic) and by mHC, against the same models in plain PyTorch
// (tests/reference/make_hc_reference.py, the copies mixed with einsum as lucidrains/
// hyper-connections mixes them). From the reference's weights: the logits, the loss and every
// gradient within 1e-10, then 20 AdamW steps, every loss and every parameter after the last
// within 1e-10 (reference.hpp's check_adamw_steps says why the key bias within 1e-8).
#include <string>

#include "nn/stream_reference_lm.hpp"

using namespace tapegrad;
using namespace tapegrad::testing;

namespace {

constexpr double kTol = 1e-10;

const ReferenceFile& hc_reference() {
  static const ReferenceFile file(std::string(TAPEGRAD_REFERENCE_DIR) + "/hc_reference.txt",
                                  "tests/reference/make_hc_reference.py");
  return file;
}

// make_hc_reference.py's model, its stream widened to 3 copies by `scheme`.
std::shared_ptr<nn::TransformerLM> reference_lm(const std::string& scheme) {
  nn::StreamConfig stream;
  stream.scheme = scheme;
  stream.hc_rate = 3;
  return reference_stream_lm(stream, hc_reference(), scheme + ".");
}

}  // namespace

TEST_CASE("Hyper-Connections and mHC LMs match PyTorch: logits, loss and every gradient",
          "[nn][stream][hc][reference]") {
  for (const std::string scheme : {"hyper_connections", "mhc"}) {
    DYNAMIC_SECTION(scheme) {
      auto lm = reference_lm(scheme);
      // 8 per sublayer (HC: 2 static, 6 of DHC; mHC: 3 biases, 5 dynamic)
      CHECK(check_stream_reference(*lm, hc_reference(), scheme + ".", kTol) == 4 * 8);
    }
  }
}

TEST_CASE("Hyper-Connections and mHC LMs follow PyTorch's 20 AdamW steps", "[nn][stream][hc][reference][optim]") {
  for (const std::string scheme : {"hyper_connections", "mhc"}) {
    DYNAMIC_SECTION(scheme) {
      auto lm = reference_lm(scheme);
      const std::string prefix = scheme + ".";
      check_adamw_steps(*lm, hc_reference(), prefix, [&] { return reference_stream_loss(*lm, hc_reference(), prefix); },
                        kTol, 8);
    }
  }
}
