// test_dyt_vs_torch.cpp — 2-layer Pre-LN TransformerLMs with DyT and with Derf norms against the
// same models in plain PyTorch (tests/reference/make_dyt_reference.py: make_nn_reference's LM
// with each LayerNorm replaced, as DyT's and Derf's reference code writes them). The model is
// built with the reference's α at init for each role and must start there; from the reference's
// weights, the logits, the loss and every gradient within 1e-10, then 20 AdamW steps: every
// loss, and every parameter after the last step, within 1e-10 (the key bias, whose gradient is
// rounding noise that Adam magnifies, within 1e-8: reference.hpp's check_adamw_steps).
#include <string>
#include <vector>

#include <catch2/catch.hpp>
#include <tapegrad/tapegrad.hpp>

#include "support/reference.hpp"

using namespace tapegrad;
using tapegrad::testing::ReferenceFile;

namespace {

constexpr double kTol = 1e-10;
constexpr std::int64_t kVocab = 11;

const ReferenceFile& dyt_reference() {
  static const ReferenceFile file(std::string(TAPEGRAD_REFERENCE_DIR) + "/dyt_reference.txt",
                                  "tests/reference/make_dyt_reference.py");
  return file;
}

// make_dyt_reference.py's model: make_nn_reference's LM (d_model 8, 2 heads, d_ff 16, exact
// GELU, tied head), Pre-LN, the point-wise norm `kind` with α at init 0.8, 0.4 and 0.6 by role.
std::shared_ptr<nn::TransformerLM> reference_lm(const nn::NormKind& kind) {
  nn::TransformerLMConfig c;
  c.vocab_size = kVocab;
  c.max_seq_len = 8;
  c.n_layers = 2;
  c.tie_weights = true;
  c.block = {.d_model = 8, .n_heads = 2, .d_ff = 16, .activation = nn::Activation::gelu, .norm = kind,
             .placement = nn::Placement::pre, .dtype = DType::float64};
  c.block.norm_alpha0_attn = 0.8;
  c.block.norm_alpha0_ffn = 0.4;
  c.block.norm_alpha0_final = 0.6;
  auto lm = std::make_shared<nn::TransformerLM>(c);
  // before the reference's weights replace them: each norm's α where its role says
  for (const auto& [name, p] : lm->named_parameters())
    if (name.ends_with(".alpha")) {
      INFO(name);
      CHECK_CLOSE(name, p, dyt_reference().get(kind.name + ".param." + name), 0.0, 0.0);
    }
  tapegrad::testing::load_reference_parameters(*lm, dyt_reference(), kind.name + ".param.", DType::float64);
  return lm;
}

Tensor loss_of(nn::TransformerLM& lm, const std::string& kind) {
  const Tensor tokens = dyt_reference().get(kind + ".tokens"), targets = dyt_reference().get(kind + ".targets");
  return cross_entropy(lm.forward(tokens).reshape({tokens.numel(), kVocab}), targets.reshape({targets.numel()}));
}

}  // namespace

TEST_CASE("LMs with DyT and Derf match PyTorch: logits, loss and every gradient", "[nn][dyt][reference]") {
  const ReferenceFile& ref = dyt_reference();
  for (const nn::NormKind& kind : {nn::NormKind::dyt, nn::NormKind::derf}) {
    DYNAMIC_SECTION(kind.name) {
      auto lm = reference_lm(kind);
      const Tensor logits = lm->forward(ref.get(kind.name + ".tokens"));
      CHECK_CLOSE("logits", logits, ref.get(kind.name + ".logits"), kTol, 0.0);
      const Tensor loss = loss_of(*lm, kind.name);
      CHECK_CLOSE("loss", loss, ref.get(kind.name + ".loss"), kTol, 0.0);
      loss.backward();
      std::size_t checked = 0;
      for (const auto& [name, p] : lm->named_parameters()) {
        CHECK_CLOSE("grad " + name, p.grad(), ref.get(kind.name + ".grad." + name), kTol, 0.0);
        ++checked;
      }
      // per block 8 linear tensors and 2 norms; tok_emb, pos_emb, final_norm
      const std::size_t per_norm = kind == nn::NormKind::dyt ? 3 : 4;
      CHECK(checked == 2 * (8 + 2 * per_norm) + 2 + per_norm);
    }
  }
}

TEST_CASE("LMs with DyT and Derf follow PyTorch's 20 AdamW steps", "[nn][dyt][reference][optim]") {
  const ReferenceFile& ref = dyt_reference();
  for (const nn::NormKind& kind : {nn::NormKind::dyt, nn::NormKind::derf}) {
    DYNAMIC_SECTION(kind.name) {
      auto lm = reference_lm(kind);
      tapegrad::testing::check_adamw_steps(*lm, ref, kind.name + ".", [&] { return loss_of(*lm, kind.name); }, kTol, 8);
    }
  }
}
