// test_llama_vs_torch.cpp — the LLaMA preset (nn/presets.hpp) against a 2-layer LLaMA written
// in plain PyTorch (tests/reference/make_llama_reference.py): Pre-RMSNorm, RoPE, grouped-query
// attention (4 query heads, 2 key/value heads), SwiGLU, no biases, untied head. From the same
// weights (tests/reference/llama_model.safetensors, tapegrad's names): logits and every
// parameter gradient within 1e-12 in float64, and the losses of 20 AdamW steps within 1e-9.
#include <set>

#include <catch2/catch.hpp>
#include <tapegrad/tapegrad.hpp>

#include "support/reference.hpp"

using namespace tapegrad;
using tapegrad::testing::ReferenceFile;

namespace {

const ReferenceFile& llama_reference() {
  static const ReferenceFile file(std::string(TAPEGRAD_REFERENCE_DIR) + "/llama_reference.txt");
  return file;
}

// The shape make_llama_reference.py uses.
std::shared_ptr<nn::TransformerLM> llama_from_reference() {
  nn::ModelShape shape;
  shape.vocab_size = 11;
  shape.max_seq_len = 8;
  shape.n_layers = 2;
  shape.d_model = 16;
  shape.n_heads = 4;
  shape.n_kv_heads = 2;
  nn::TransformerLMConfig c = nn::llama_config(shape, /*ffn_multiple_of=*/8);
  c.block.dtype = DType::float64;
  REQUIRE(c.block.d_ff == 48);  // ⌊8·16/3⌋ = 42, rounded up to a multiple of 8
  auto model = std::make_shared<nn::TransformerLM>(c);
  const io::SafetensorsFile weights = io::load_safetensors(std::string(TAPEGRAD_REFERENCE_DIR) + "/llama_model.safetensors");
  io::load_state_dict(*model, weights.tensors);  // strict: every name, both ways
  return model;
}

Tensor loss_of(nn::TransformerLM& model) {
  const ReferenceFile& ref = llama_reference();
  const Tensor tokens = ref.get("tokens"), targets = ref.get("targets");
  return cross_entropy(model.forward(tokens).reshape({tokens.numel(), 11}), targets.reshape({targets.numel()}));
}

}  // namespace

TEST_CASE("the LLaMA preset matches a plain-PyTorch LLaMA: logits and every gradient", "[nn][llama][reference]") {
  const ReferenceFile& ref = llama_reference();
  auto model = llama_from_reference();
  CHECK_FALSE(model->pos_emb);
  CHECK(model->lm_head);
  const Tensor logits = model->forward(ref.get("tokens"));
  CHECK_CLOSE("logits", logits, ref.get("logits"), 1e-12, 1e-12);
  const Tensor loss = loss_of(*model);
  CHECK_CLOSE("loss", loss, ref.get("loss"), 1e-12, 1e-12);
  loss.backward();
  std::size_t checked = 0;
  for (const auto& [name, p] : model->named_parameters()) {
    CHECK_CLOSE("grad " + name, p.grad(), ref.get("grad." + name), 1e-12, 1e-12);
    ++checked;
  }
  CHECK(checked == 2 * 7 + 3);  // 7 per block, tok_emb, final_norm, lm_head
}

TEST_CASE("the LLaMA preset follows PyTorch's 20 AdamW steps", "[nn][llama][reference][optim]") {
  auto model = llama_from_reference();
  optim::AdamW opt(model->named_parameters(), optim::AdamOptions(1e-2).betas({0.9, 0.95}).eps(1e-8).weight_decay(0.1));
  const std::vector<double> expected = llama_reference().get("adamw.losses").to_vector();
  REQUIRE(expected.size() == 20);
  for (std::size_t step = 0; step < expected.size(); ++step) {
    opt.zero_grad();
    const Tensor loss = loss_of(*model);
    loss.backward();
    opt.step();
    INFO("step " << step);
    CHECK(loss.item() == Approx(expected[step]).margin(1e-9).epsilon(0));
  }
}

TEST_CASE("presets: LLaMA's FFN width rule and the names", "[nn][llama]") {
  CHECK(nn::llama_ffn_hidden(4096) == 11008);  // LLaMA 7B
  CHECK(nn::llama_ffn_hidden(5120) == 13824);  // LLaMA 13B
  CHECK(nn::llama_ffn_hidden(128) == 512);
  CHECK(nn::llama_ffn_hidden(16, 8) == 48);
  const nn::TransformerLMConfig gpt2 = nn::preset_config("gpt2", {});
  CHECK(gpt2.tie_weights);
  CHECK_FALSE(gpt2.block.rope);
  CHECK(gpt2.block.activation == nn::Activation::gelu_tanh);
  const nn::TransformerLMConfig llama = nn::preset_config("llama", {});
  CHECK(llama.block.rope);
  CHECK(llama.block.norm == nn::NormKind::rmsnorm);
  CHECK_FALSE(llama.block.bias);
  CHECK_FALSE(llama.tie_weights);
  REQUIRE_THROWS_WITH(nn::preset_config("gpt3", {}), Catch::Contains("unknown model preset 'gpt3' (expected gpt2 or llama)"));
}
