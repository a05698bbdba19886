// test_stream_vs_torch.cpp — 2-layer Pre-LN TransformerLMs whose blocks are joined by
// DenseFormer's depth-weighted averages and by value residual learning (learned λ), against
// the same models in plain PyTorch (tests/reference/make_stream_reference.py, written as the
// papers' reference code joins them: epfml/DenseFormer, Zcchill/Value-Residual-Learning). From
// the reference's weights: the logits, the loss and every gradient within 1e-10, then 20 AdamW
// steps, every loss and every parameter after the last within 1e-10 (reference.hpp's
// check_adamw_steps says why the key bias within 1e-8).
#include <string>

#include <catch2/catch.hpp>
#include <tapegrad/tapegrad.hpp>

#include "support/reference.hpp"

using namespace tapegrad;
using tapegrad::testing::ReferenceFile;

namespace {

constexpr double kTol = 1e-10;
constexpr std::int64_t kVocab = 11;

const ReferenceFile& stream_reference() {
  static const ReferenceFile file(std::string(TAPEGRAD_REFERENCE_DIR) + "/stream_reference.txt",
                                  "tests/reference/make_stream_reference.py");
  return file;
}

// make_stream_reference.py's model: make_nn_reference's LM (d_model 8, 2 heads, d_ff 16, exact
// GELU, tied head), Pre-LN with LayerNorm, joined by the stream scheme `scheme`.
std::shared_ptr<nn::TransformerLM> reference_lm(const std::string& scheme) {
  nn::TransformerLMConfig c;
  c.vocab_size = kVocab;
  c.max_seq_len = 8;
  c.n_layers = 2;
  c.tie_weights = true;
  c.block = {.d_model = 8, .n_heads = 2, .d_ff = 16, .activation = nn::Activation::gelu,
             .placement = nn::Placement::pre, .dtype = DType::float64};
  c.stream.scheme = scheme;
  c.stream.value_lambda_learnable = scheme == "value_residual";
  auto lm = std::make_shared<nn::TransformerLM>(c);
  tapegrad::testing::load_reference_parameters(*lm, stream_reference(), scheme + ".param.", DType::float64);
  return lm;
}

Tensor loss_of(nn::TransformerLM& lm, const std::string& scheme) {
  const Tensor tokens = stream_reference().get(scheme + ".tokens"), targets = stream_reference().get(scheme + ".targets");
  return cross_entropy(lm.forward(tokens).reshape({tokens.numel(), kVocab}), targets.reshape({targets.numel()}));
}

}  // namespace

TEST_CASE("DenseFormer and value residual LMs match PyTorch: logits, loss and every gradient",
          "[nn][stream][reference]") {
  const ReferenceFile& ref = stream_reference();
  for (const std::string scheme : {"denseformer", "value_residual"}) {
    DYNAMIC_SECTION(scheme) {
      auto lm = reference_lm(scheme);
      CHECK_CLOSE("logits", lm->forward(ref.get(scheme + ".tokens")), ref.get(scheme + ".logits"), kTol, 0.0);
      const Tensor loss = loss_of(*lm, scheme);
      CHECK_CLOSE("loss", loss, ref.get(scheme + ".loss"), kTol, 0.0);
      loss.backward();
      std::size_t stream_params = 0;
      for (const auto& [name, p] : lm->named_parameters()) {
        CHECK_CLOSE("grad " + name, p.grad(), ref.get(scheme + ".grad." + name), kTol, 0.0);
        if (name.rfind("stream.", 0) == 0) ++stream_params;
      }
      CHECK(stream_params == 2);  // two averages; or λ1 and λ2
    }
  }
}

TEST_CASE("DenseFormer and value residual LMs follow PyTorch's 20 AdamW steps", "[nn][stream][reference][optim]") {
  for (const std::string scheme : {"denseformer", "value_residual"}) {
    DYNAMIC_SECTION(scheme) {
      auto lm = reference_lm(scheme);
      tapegrad::testing::check_adamw_steps(*lm, stream_reference(), scheme + ".", [&] { return loss_of(*lm, scheme); },
                                           kTol, 8);
    }
  }
}
