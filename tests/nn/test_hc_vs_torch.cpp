// test_hc_vs_torch.cpp — 2-layer Pre-LN TransformerLMs on a stream widened to n = 3 copies by
// Hyper-Connections (dynamic) and by mHC, against the same models in plain PyTorch
// (tests/reference/make_hc_reference.py, the copies mixed with einsum as lucidrains/
// hyper-connections mixes them). From the reference's weights: the logits, the loss and every
// gradient within 1e-10, then 20 AdamW steps, every loss and every parameter after the last
// within 1e-10 (reference.hpp's check_adamw_steps says why the key bias within 1e-8).
#include <string>

#include <catch2/catch.hpp>
#include <tapegrad/tapegrad.hpp>

#include "support/reference.hpp"

using namespace tapegrad;
using tapegrad::testing::ReferenceFile;

namespace {

constexpr double kTol = 1e-10;
constexpr std::int64_t kVocab = 11;

const ReferenceFile& hc_reference() {
  static const ReferenceFile file(std::string(TAPEGRAD_REFERENCE_DIR) + "/hc_reference.txt",
                                  "tests/reference/make_hc_reference.py");
  return file;
}

// make_hc_reference.py's model: make_nn_reference's LM (d_model 8, 2 heads, d_ff 16, exact GELU,
// tied head), Pre-LN with LayerNorm, its stream widened to 3 copies by `scheme`.
std::shared_ptr<nn::TransformerLM> reference_lm(const std::string& scheme) {
  nn::TransformerLMConfig c;
  c.vocab_size = kVocab;
  c.max_seq_len = 8;
  c.n_layers = 2;
  c.tie_weights = true;
  c.block = {.d_model = 8, .n_heads = 2, .d_ff = 16, .activation = nn::Activation::gelu,
             .placement = nn::Placement::pre, .dtype = DType::float64};
  c.stream.scheme = scheme;
  c.stream.hc_rate = 3;
  auto lm = std::make_shared<nn::TransformerLM>(c);
  tapegrad::testing::load_reference_parameters(*lm, hc_reference(), scheme + ".param.", DType::float64);
  return lm;
}

Tensor loss_of(nn::TransformerLM& lm, const std::string& scheme) {
  const Tensor tokens = hc_reference().get(scheme + ".tokens"), targets = hc_reference().get(scheme + ".targets");
  return cross_entropy(lm.forward(tokens).reshape({tokens.numel(), kVocab}), targets.reshape({targets.numel()}));
}

}  // namespace

TEST_CASE("Hyper-Connections and mHC LMs match PyTorch: logits, loss and every gradient",
          "[nn][stream][hc][reference]") {
  const ReferenceFile& ref = hc_reference();
  for (const std::string scheme : {"hyper_connections", "mhc"}) {
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
      CHECK(stream_params == 4 * 8);  // 8 per sublayer (HC: 2 static, 6 of DHC; mHC: 3 biases, 5 dynamic)
    }
  }
}

TEST_CASE("Hyper-Connections and mHC LMs follow PyTorch's 20 AdamW steps", "[nn][stream][hc][reference][optim]") {
  for (const std::string scheme : {"hyper_connections", "mhc"}) {
    DYNAMIC_SECTION(scheme) {
      auto lm = reference_lm(scheme);
      tapegrad::testing::check_adamw_steps(*lm, hc_reference(), scheme + ".", [&] { return loss_of(*lm, scheme); },
                                           kTol, 8);
    }
  }
}
