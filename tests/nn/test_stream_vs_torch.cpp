// test_stream_vs_torch.cpp — 2-layer Pre-LN TransformerLMs whose blocks are joined by
// DenseFormer's depth-weighted averages and by value residual learning (learned λ), against
// the same models in plain PyTorch (tests/reference/make_stream_reference.py, written as the
// papers' reference code joins them: epfml/DenseFormer, Zcchill/Value-Residual-Learning). From
// the reference's weights: the logits, the loss and every gradient within 1e-10, then 20 AdamW
// steps, every loss and every parameter after the last within 1e-10 (reference.hpp's
// check_adamw_steps says why the key bias within 1e-8).
#include <string>

#include "nn/stream_reference_lm.hpp"

using namespace tapegrad;
using namespace tapegrad::testing;

namespace {

constexpr double kTol = 1e-10;

const ReferenceFile& stream_reference() {
  static const ReferenceFile file(std::string(TAPEGRAD_REFERENCE_DIR) + "/stream_reference.txt",
                                  "tests/reference/make_stream_reference.py");
  return file;
}

// make_stream_reference.py's model (stream_reference_lm.hpp) joined by the stream scheme
// `scheme`, its λ learned under value residual.
std::shared_ptr<nn::TransformerLM> reference_lm(const std::string& scheme) {
  nn::StreamConfig stream;
  stream.scheme = scheme;
  stream.value_lambda_learnable = scheme == "value_residual";
  return reference_stream_lm(stream, stream_reference(), scheme + ".");
}

}  // namespace

TEST_CASE("DenseFormer and value residual LMs match PyTorch: logits, loss and every gradient",
          "[nn][stream][reference]") {
  for (const std::string scheme : {"denseformer", "value_residual"}) {
    DYNAMIC_SECTION(scheme) {
      auto lm = reference_lm(scheme);
      CHECK(check_stream_reference(*lm, stream_reference(), scheme + ".", kTol) == 2);  // two averages; or λ1 and λ2
    }
  }
}

TEST_CASE("DenseFormer and value residual LMs follow PyTorch's 20 AdamW steps", "[nn][stream][reference][optim]") {
  for (const std::string scheme : {"denseformer", "value_residual"}) {
    DYNAMIC_SECTION(scheme) {
      auto lm = reference_lm(scheme);
      check_adamw_steps(*lm, stream_reference(), scheme + ".",
                        [&] { return reference_stream_loss(*lm, stream_reference(), scheme + "."); }, kTol, 8);
    }
  }
}
