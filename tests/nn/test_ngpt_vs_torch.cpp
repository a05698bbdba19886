// test_ngpt_vs_torch.cpp — a 2-layer nGPT language model (placement ngpt, nn/ngpt.hpp) against
// the same model in plain PyTorch, written as NVIDIA/ngpt's model.py writes it
// (tests/reference/make_ngpt_reference.py says where it departs from that code, and why). From
// the reference's weights: the logits, the loss and every gradient within 1e-10, then 20 AdamW
// steps, each followed by the renormalization of the matrices (register_ngpt_normalization,
// a step post-hook), every loss and every parameter after the last within 1e-10.
#include <string>

#include <catch2/catch.hpp>
#include <tapegrad/tapegrad.hpp>

#include "support/reference.hpp"

using namespace tapegrad;
using tapegrad::testing::ReferenceFile;

namespace {

constexpr double kTol = 1e-10;
constexpr std::int64_t kVocab = 11, kDModel = 8;

const ReferenceFile& ngpt_reference() {
  static const ReferenceFile file(std::string(TAPEGRAD_REFERENCE_DIR) + "/ngpt_reference.txt",
                                  "tests/reference/make_ngpt_reference.py");
  return file;
}

// make_ngpt_reference.py's model: d_model 8, 2 heads, SwiGLU of width 16, rotary positions
// (Hugging Face's layout), no biases, an untied head.
std::shared_ptr<nn::TransformerLM> reference_lm() {
  nn::TransformerLMConfig c;
  c.vocab_size = kVocab;
  c.max_seq_len = 8;
  c.n_layers = 2;
  c.tie_weights = false;
  c.block = {.d_model = kDModel, .n_heads = 2, .d_ff = 16, .activation = nn::Activation::swiglu,
             .placement = nn::Placement::ngpt, .bias = false, .dtype = DType::float64, .rope = true};
  auto lm = std::make_shared<nn::TransformerLM>(c);
  tapegrad::testing::load_reference_parameters(*lm, ngpt_reference(), "param.", DType::float64);
  return lm;
}

Tensor loss_of(nn::TransformerLM& lm) {
  const Tensor tokens = ngpt_reference().get("tokens"), targets = ngpt_reference().get("targets");
  return cross_entropy(lm.forward(tokens).reshape({tokens.numel(), kVocab}), targets.reshape({targets.numel()}));
}

}  // namespace

TEST_CASE("An nGPT LM matches PyTorch: logits, loss and every gradient", "[nn][ngpt][reference]") {
  const ReferenceFile& ref = ngpt_reference();
  auto lm = reference_lm();
  CHECK_CLOSE("logits", lm->forward(ref.get("tokens")), ref.get("logits"), kTol, 0.0);
  const Tensor loss = loss_of(*lm);
  CHECK_CLOSE("loss", loss, ref.get("loss"), kTol, 0.0);
  loss.backward();
  for (const auto& [name, p] : lm->named_parameters()) CHECK_CLOSE("grad " + name, p.grad(), ref.get("grad." + name), kTol, 0.0);
  CHECK(lm->named_parameters().size() == 3 + 2 * 10);  // tok_emb, s_z, lm_head and 10 in each block
}

TEST_CASE("An nGPT LM follows PyTorch's 20 AdamW steps with the renormalization after each",
          "[nn][ngpt][reference][optim]") {
  auto lm = reference_lm();
  tapegrad::testing::check_adamw_steps(*lm, ngpt_reference(), "", [&] { return loss_of(*lm); }, kTol, kDModel,
                                       [&](optim::Optimizer& opt) { optim::register_ngpt_normalization(opt, *lm); });
}
