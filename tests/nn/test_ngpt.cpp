// test_ngpt.cpp — nGPT (placement ngpt, nn/ngpt.hpp, Loshchilov et al. 2024, arXiv 2410.01131):
// one block against its formula written out with plain ops (the attention's unit q and k times
// s_qk with the √D softmax scale, the MLP's s_u and s_v·√C, the eigen learning rates); a float64
// gradcheck of a whole LM; every block's output on the unit sphere; every matrix unit along
// d_model at init and after an optimizer step with register_ngpt_normalization; model files;
// the settings it does not go with, refused by name. tests/nn/test_ngpt_vs_torch.cpp has the
// PyTorch reference.
#include <cmath>
#include <string>

#include "io/io_helpers.hpp"
#include "nn/lm_gradcheck.hpp"
#include "nn/nn_helpers.hpp"

using namespace tapegrad;
using namespace tapegrad::testing;  // param, randomize_parameters_, with_parameters, ...
using Catch::Contains;

namespace {

constexpr std::int64_t kB = 2, kT = 4, kC = 8, kH = 2, kD = kC / kH, kFF = 16;
constexpr DType f64 = DType::float64;

nn::TransformerBlockConfig ngpt_block() {
  return {.d_model = kC, .n_heads = kH, .d_ff = kFF, .activation = nn::Activation::swiglu,
          .placement = nn::Placement::ngpt, .causal = true, .bias = false, .dtype = f64, .rope = true};
}

nn::TransformerLMConfig ngpt_lm(bool tie = false) {
  nn::TransformerLMConfig c;
  c.vocab_size = 8;
  c.max_seq_len = 8;
  c.n_layers = 2;
  c.tie_weights = tie;
  c.block = ngpt_block();
  return c;
}

// Norm(x) = x / ‖x‖ over the last dim, written out.
Tensor naive_unit(const Tensor& x) { return div(x, sqrt(sum(mul(x, x), {-1}, true))); }

// ‖w‖ along dim, the largest distance from 1.
double worst_unit_error(const Tensor& w, std::int64_t dim) {
  double worst = 0;
  for (double n : sqrt(sum(mul(w, w), {dim})).to_vector()) worst = std::max(worst, std::abs(n - 1.0));
  return worst;
}

// Every matrix of an nGPT LM with the dim that runs along d_model (NVIDIA/ngpt's normalize_matrices).
std::vector<std::pair<std::string, std::int64_t>> stream_matrices(const nn::TransformerLM& lm) {
  std::vector<std::pair<std::string, std::int64_t>> out = {{"tok_emb.weight", 1}};
  if (lm.lm_head) out.emplace_back("lm_head.weight", 1);
  for (std::int64_t l = 0; l < lm.config.n_layers; ++l) {
    const std::string b = "blocks." + std::to_string(l) + ".";
    for (const char* rows : {"attn.qkv.weight", "ffn.fc1.weight", "ffn.fc_gate.weight"}) out.emplace_back(b + rows, 1);
    for (const char* columns : {"attn.out_proj.weight", "ffn.fc2.weight"}) out.emplace_back(b + columns, 0);
  }
  return out;
}

Tensor parameter(const nn::Module& m, const std::string& name) {
  for (const auto& [n, p] : m.named_parameters())
    if (n == name) return p;
  FAIL("no parameter " << name);
  return Tensor();
}

}  // namespace

TEST_CASE("An nGPT block is its formula written out with plain ops", "[nn][ngpt]") {
  nn::TransformerBlock block(ngpt_block());
  randomize_parameters_(block, 7);
  const Tensor x = param({kB, kT, kC}, 3);
  const double sqrt_c = std::sqrt(static_cast<double>(kC));
  // Attention: unit q and k heads (after rope) times s_qk = √C·s̃ (s_init 1/√C, init 1),
  // softmax(q·kᵀ·√D) causal, the heads merged and projected.
  auto& attn = *block.attn;
  const Tensor qkv = linear(x, attn.qkv->weight).reshape({kB, kT, 3 * kH, kD});
  const Tensor rotated = rotary_embedding(qkv);  // Hugging Face's layout, θ = 10000 (tested against it elsewhere)
  const Tensor s_qk = mul(attn.s_qk, sqrt_c).reshape({kH, kD});
  auto heads = [&](const Tensor& t, std::int64_t start) { return narrow(t, 2, start, kH).transpose(1, 2); };  // (B, H, T, D)
  const Tensor q = mul(s_qk.reshape({1, kH, 1, kD}), naive_unit(heads(rotated, 0)));
  const Tensor k = mul(s_qk.reshape({1, kH, 1, kD}), naive_unit(heads(rotated, kH)));
  const Tensor v = heads(qkv, 2 * kH);
  std::vector<double> mask(kT * kT, 0.0);  // −∞ where key j comes after query i
  for (std::int64_t i = 0; i < kT; ++i)
    for (std::int64_t j = i + 1; j < kT; ++j) mask[static_cast<std::size_t>(i * kT + j)] = -INFINITY;
  const Tensor future = tensor(mask, {kT, kT}, f64);
  const Tensor scores = add(mul(matmul(q, k.transpose(2, 3)), std::sqrt(static_cast<double>(kD))), future);
  const Tensor attended = matmul(softmax(scores, -1), v).transpose(1, 2).reshape({kB, kT, kC});
  const Tensor attn_out = linear(attended, attn.out_proj->weight);
  // The MLP: fc2(silu(s_v·√C ⊙ fc1(h)) ⊙ (s_u ⊙ fc_gate(h))), s_u, s_v with s_init 1.
  auto& ffn = *block.ffn;
  auto mlp = [&](const Tensor& h) {
    const Tensor u = mul(linear(h, ffn.fc_gate->weight), ffn.s_u);
    const Tensor nu = mul(linear(h, ffn.fc1->weight), mul(ffn.s_v, sqrt_c));
    return linear(mul(silu(nu), u), ffn.fc2->weight);
  };
  // The eigen learning rates: α = |0.05·√C·s̃|.
  auto alpha = [&](const nn::Residual& r) { return abs(mul(r.eigen_lr, 0.05 * sqrt_c)); };
  const Tensor x_hat = naive_unit(x);
  const Tensor h = naive_unit(add(x_hat, mul(alpha(*block.attn_residual), sub(naive_unit(attn_out), x_hat))));
  const Tensor y = naive_unit(add(h, mul(alpha(*block.ffn_residual), sub(naive_unit(mlp(h)), h))));
  CHECK_CLOSE(block.forward(x), y, 1e-12);
}

TEST_CASE("An nGPT LM passes a float64 gradcheck, tied and untied", "[nn][ngpt][gradcheck]") {
  for (bool tie : {false, true}) {
    DYNAMIC_SECTION((tie ? "tied" : "untied")) {
      nn::TransformerLM lm(ngpt_lm(tie));
      randomize_parameters_(lm, 11);
      CHECK_LM_GRADCHECK(lm, 5);
    }
  }
}

TEST_CASE("Every nGPT block's output lies on the unit sphere", "[nn][ngpt]") {
  nn::TransformerLMConfig c = ngpt_lm();
  c.n_layers = 4;
  nn::TransformerLM lm(c);
  randomize_parameters_(lm, 13);  // weights off the sphere too: the blocks normalize what they make
  Tensor h = mul(param({kB, kT, kC}, 17), 3.0);  // not unit
  for (std::int64_t l = 0; l < c.n_layers; ++l) {
    h = static_cast<nn::TransformerBlock&>(*(*lm.blocks)[static_cast<std::size_t>(l)]).forward(h);
    INFO("block " << l);
    CHECK(worst_unit_error(h, 2) < 1e-14);
  }
  // and no final norm: the logits are the head's, times s_z = √C·s̃
  CHECK_FALSE(lm.final_norm);
  const Tensor tokens = tensor({1, 2, 3, 4, 0, 1}, {2, 3}, DType::int64);
  const Tensor logits = lm.forward(tokens);
  NoGradGuard no_grad;
  Tensor stream = lm.tok_emb->forward(tokens);
  for (const auto& b : *lm.blocks) stream = static_cast<nn::TransformerBlock&>(*b).forward(stream);
  CHECK_CLOSE(logits, mul(mul(lm.s_z, std::sqrt(8.0)), lm.lm_head->forward(stream)), 1e-14);
}

TEST_CASE("nGPT's matrices are unit along d_model at init and after every step with the hook",
          "[nn][ngpt][optim]") {
  for (DType dtype : {DType::float32, DType::float64}) {
    DYNAMIC_SECTION(dtype_name(dtype)) {
      nn::TransformerLMConfig c = ngpt_lm();
      c.block.dtype = dtype;
      nn::TransformerLM lm(c);
      const double tol = dtype == DType::float32 ? 1e-6 : 1e-14;
      for (const auto& [name, dim] : stream_matrices(lm)) {
        INFO("at init: " << name);
        CHECK(worst_unit_error(parameter(lm, name), dim) < tol);
      }
      // the vectors start at their stored s̃: 1/√C for α, s_qk, s_z; 1 for s_u, s_v
      CHECK(parameter(lm, "blocks.0.attn_residual.eigen_lr").to_vector()[0] == Approx(1 / std::sqrt(8.0)));
      CHECK(parameter(lm, "blocks.1.attn.s_qk").to_vector()[3] == Approx(1 / std::sqrt(8.0)));
      CHECK(parameter(lm, "blocks.1.ffn.s_v").to_vector()[0] == 1.0);
      CHECK(lm.s_z.to_vector()[7] == Approx(1 / std::sqrt(8.0)));
      optim::AdamW opt(lm.named_parameters(), optim::AdamOptions(0.05).weight_decay(0.1));
      const Tensor tokens = tensor({1, 2, 3, 4, 0, 1}, {2, 3}, DType::int64);
      const Tensor weights = param({2, 3, 8}, 19).detach().to(dtype);
      auto step = [&] {
        opt.zero_grad();
        sum(mul(lm.forward(tokens), weights)).backward();
        opt.step();
      };
      step();  // without the hook the step leaves the sphere
      CHECK(worst_unit_error(parameter(lm, "blocks.0.attn.qkv.weight"), 1) > 1e-3);
      HookHandle hook = optim::register_ngpt_normalization(opt, lm);
      for (int i = 0; i < 2; ++i) step();
      for (const auto& [name, dim] : stream_matrices(lm)) {
        INFO("after a step: " << name);
        CHECK(worst_unit_error(parameter(lm, name), dim) < tol);
      }
      hook.remove();
      step();
      CHECK(worst_unit_error(parameter(lm, "blocks.0.ffn.fc2.weight"), 0) > 1e-3);
    }
  }
}

TEST_CASE("An nGPT LM survives a model file, and Hugging Face's exports refuse it", "[nn][ngpt][io]") {
  nn::TransformerLM lm(ngpt_lm());
  randomize_parameters_(lm, 23);
  CHECK_LM_FILE_ROUND_TRIP(lm);
  CHECK(training::count_parameters(lm.config) == lm.num_parameters());  // train_lm's memory estimate counts them
  ScratchDir dir;
  CHECK_THROWS_AS(io::save_hf_llama(lm, dir.file("hf")), Error);
  // the fuzzers' seed (tests/io/corpus/README.md) is one, and loads
  const auto seed = io::load_model<nn::TransformerLM>(TAPEGRAD_SOURCE_DIR "/tests/io/corpus/seeds/checkpoint/model_lm_ngpt.tgc");
  CHECK(seed->config.block.placement == nn::Placement::ngpt);
  CHECK(seed->s_z.defined());
}

TEST_CASE("nGPT refuses the settings it does not go with, by name", "[nn][ngpt]") {
  using Block = nn::TransformerBlockConfig;
  const std::vector<std::pair<std::function<void(Block&)>, std::string>> block_cases = {
      {[](Block& b) { b.activation = nn::Activation::gelu; }, "activation other than swiglu"},
      {[](Block& b) { b.bias = true; }, "bias"},
      {[](Block& b) { b.rope = false; }, "rope"},
      {[](Block& b) { b.qk_norm = nn::QkNorm::rmsnorm; }, "qk_norm"},
      {[](Block& b) { b.n_kv_heads = 1; }, "n_kv_heads"},
      {[](Block& b) { b.cross_attention = true; }, "cross_attention"},
      {[](Block& b) { b.norm = nn::NormKind("rmsnorm"); }, "no norms"},
      {[](Block& b) { b.residual_scale = 2.0; }, "residual_scale"},
      {[](Block& b) { b.branch_depth_exponent = 0.5; }, "branch_depth_exponent"},
  };
  for (const auto& [change, words] : block_cases) {
    Block b = ngpt_block();
    change(b);
    INFO(words);
    CHECK_THROWS_WITH(b.validate(), Contains(words) && Contains("ngpt"));
  }
  nn::TransformerLMConfig scaled = ngpt_lm();
  scaled.embed_scale = 2.0;
  CHECK_THROWS_WITH(scaled.validate(), Contains("embed_scale") && Contains("ngpt"));
  nn::TransformerLMConfig dense = ngpt_lm();
  dense.stream.scheme = "denseformer";
  CHECK_THROWS_WITH(dense.validate(), Contains("denseformer") && Contains("ngpt"));
  // the modules' own options
  CHECK_THROWS_WITH(nn::MultiHeadAttention(nn::MultiHeadAttentionOptions(8, 2).ngpt(true)), Contains("bias"));
  CHECK_THROWS_WITH(nn::MultiHeadAttention(nn::MultiHeadAttentionOptions(8, 2).ngpt(true).bias(false).cross(true)),
                    Contains("cross-attention"));
  CHECK_THROWS_WITH(nn::MultiHeadAttention(nn::MultiHeadAttentionOptions(8, 2).ngpt(true).bias(false).n_kv_heads(1)),
                    Contains("n_kv_heads"));
  CHECK_THROWS_WITH(nn::FeedForward(nn::FeedForwardOptions(8, 16).ngpt(true).bias(false)), Contains("gelu"));
  CHECK_NOTHROW(nn::FeedForward(nn::FeedForwardOptions(8, 16).ngpt(true).bias(false).activation(nn::Activation::swiglu)));
}

TEST_CASE("An nGPT LM reads the same through its KV cache (s_qk after rope, the √D scale)", "[nn][ngpt][generate]") {
  nn::TransformerLM lm(ngpt_lm());
  randomize_parameters_(lm, 29);
  const Tensor tokens = tensor({1, 2, 3, 4, 0, 1, 5, 6}, {2, 4}, DType::int64);
  NoGradGuard no_grad;
  const Tensor full = lm.forward(tokens);
  nn::KVCache cache = lm.make_kv_cache(2, 4);
  const Tensor first = lm.forward_cached(narrow(tokens, 1, 0, 3), cache);  // positions 0..2, then 3
  const Tensor last = lm.forward_cached(narrow(tokens, 1, 3, 1), cache);
  CHECK_CLOSE(cat({first, last}, 1), full, 1e-12);
}
