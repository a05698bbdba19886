// test_diagnostics.cpp — anomaly mode names the first bad op and its module; gradient norms,
// layer statistics and residual writes (both norms, their ratio, the read-write cosine)
// measure what they claim.
#include <cmath>

#include <catch2/catch.hpp>
#include <tapegrad/tapegrad.hpp>

using namespace tapegrad;
using namespace tapegrad::nn;
using Catch::Contains;

namespace {
std::shared_ptr<TransformerLM> tiny_lm(std::int64_t layers = 3) {
  manual_seed(0);
  TransformerLMConfig c;
  c.vocab_size = 13;
  c.max_seq_len = 8;
  c.n_layers = layers;
  c.block.d_model = 8;
  c.block.n_heads = 2;
  return std::make_shared<TransformerLM>(c);
}
}  // namespace

TEST_CASE("anomaly mode names the first op that made NaN in the forward pass", "[anomaly]") {
  Tensor x = tensor({1, -1}, {2}).requires_grad_();
  {
    AnomalyModeGuard detect;
    REQUIRE_THROWS_AS(log(x), AnomalyError);
    REQUIRE_THROWS_WITH(sqrt(x), Contains("forward of 'sqrt'") && Contains("NaN/Inf") && Contains("[2]"));
  }
  CHECK_FALSE(is_anomaly_enabled());
  CHECK_NOTHROW(log(x));  // off: NaN flows silently, as in PyTorch
}

TEST_CASE("anomaly mode names the backward that made a NaN gradient", "[anomaly]") {
  Tensor x = tensor({0, 4}, {2}).requires_grad_();
  AnomalyModeGuard detect;
  Tensor y = sqrt(x).sum();  // forward is finite: sqrt(0) = 0, but d sqrt/dx at 0 is inf
  REQUIRE_THROWS_WITH(y.backward(), Contains("backward of 'sqrt'") && Contains("gradient for input 0"));
}

TEST_CASE("anomaly mode reports the module path", "[anomaly]") {
  auto lm = tiny_lm(2);
  // Poison one weight: the second block's FFN output becomes NaN.
  lm->blocks->at<TransformerBlock>(1)->ffn->fc2->weight.data<float>()[0] = NAN;
  Tensor tokens = Tensor::from_vector<std::int64_t>({1, 2, 3, 4}, {1, 4});
  AnomalyModeGuard detect;
  REQUIRE_THROWS_WITH(lm->forward(tokens), Contains("'linear'") && Contains("module 'blocks.1.ffn.fc2'"));
}

TEST_CASE("module paths are dotted from the root", "[anomaly]") {
  auto lm = tiny_lm(2);
  CHECK(lm->path() == "TransformerLM");
  CHECK(lm->blocks->at<TransformerBlock>(1)->attn->qkv->path() == "blocks.1.attn.qkv");
  CHECK(lm->tok_emb->path() == "tok_emb");
}

TEST_CASE("parameter and block gradient norms", "[diagnostics]") {
  auto lm = tiny_lm(3);
  Tensor tokens = Tensor::from_vector<std::int64_t>({1, 2, 3, 4, 5, 6}, {2, 3});
  Tensor logits = lm->forward(tokens);
  cross_entropy(logits.reshape({6, 13}), tokens.reshape({6})).backward();
  const auto norms = parameter_norms(*lm);
  REQUIRE(norms.size() == lm->named_parameters().size());
  double total = 0;
  for (const auto& n : norms) {
    CHECK(std::isfinite(n.grad_norm));
    total += n.grad_norm * n.grad_norm;
  }
  CHECK(total_grad_norm(*lm) == Approx(std::sqrt(total)));
  // A hand computation for one parameter.
  const Tensor g = lm->tok_emb->weight.grad();
  double s = 0;
  for (double v : g.to_vector()) s += v * v;
  CHECK(norms[0].name == "tok_emb.weight");
  CHECK(norms[0].grad_norm == Approx(std::sqrt(s)));
  const auto per_block = block_grad_norms(*lm->blocks);
  REQUIRE(per_block.size() == 3);
  for (double v : per_block) CHECK(v > 0);
  lm->zero_grad();
  CHECK(total_grad_norm(*lm) == 0);
}

TEST_CASE("layer statistics: RMS and cosine to the previous layer", "[diagnostics]") {
  Tensor a = tensor({3, 4, 0, 0}, {1, 2, 2});  // rows (3,4) and (0,0)... rms = sqrt(25/4)
  Tensor b = tensor({6, 8, 1, 0}, {1, 2, 2});
  const LayerStats stats = layer_stats({a, b}, Tensor());
  CHECK(stats.rms[0] == Approx(2.5));
  CHECK(std::isnan(stats.cosine_to_previous[0]));
  // token 0: (6,8)·(3,4) parallel → 1; token 1: (1,0)·(0,0) → 0 (zero vector): mean 0.5
  CHECK(stats.cosine_to_previous[1] == Approx(0.5));

  auto lm = tiny_lm(3);
  OutputRecorder outputs(*lm->blocks);  // forward hooks on each block
  (void)lm->forward(Tensor::from_vector<std::int64_t>({1, 2, 3}, {1, 3}));
  REQUIRE(outputs.outputs().size() == 3);
  const LayerStats lm_stats = layer_stats(outputs.outputs());
  for (std::size_t l = 1; l < 3; ++l) CHECK((lm_stats.cosine_to_previous[l] > -1 && lm_stats.cosine_to_previous[l] <= 1.0 + 1e-6));
}

TEST_CASE("residual write ratio is ||F|| / ||x||", "[diagnostics]") {
  auto lm = tiny_lm(2);
  WriteRatioRecorder recorder(*lm);  // forward hooks only
  CHECK(std::isnan(recorder.writes()[0].ratio));  // before a forward
  (void)lm->forward(Tensor::from_vector<std::int64_t>({1, 2, 3}, {1, 3}));
  const auto ratios = recorder.ratios();
  REQUIRE(ratios.size() == 4);
  CHECK(ratios[0].path == "blocks.0.attn_residual");
  CHECK(ratios[3].path == "blocks.1.ffn_residual");
  CHECK(ratios[3].block == "blocks.1");
  CHECK(ratios[2].sublayer == "attn");
  CHECK(ratios[3].sublayer == "ffn");
  for (const auto& r : ratios) {
    CHECK((r.ratio > 0 && std::isfinite(r.ratio)));
    CHECK(r.ratio == r.output_norm / r.input_norm);
    CHECK((r.read_write_cosine >= -1 && r.read_write_cosine <= 1));
  }
  // A checkpointed block runs its sublayers again in backward, below the block's hooks: the
  // writes stay those of the forward.
  lm->set_activation_checkpointing(true);
  const Tensor tokens = Tensor::from_vector<std::int64_t>({1, 2, 3}, {1, 3});
  cross_entropy(lm->forward(tokens).reshape({3, 13}), tokens.reshape({3})).backward();
  const auto checkpointed = recorder.writes();
  for (std::size_t i = 0; i < ratios.size(); ++i) {
    CHECK(checkpointed[i].output_norm == ratios[i].output_norm);
    CHECK(checkpointed[i].read_write_cosine == ratios[i].read_write_cosine);
  }
  // Direct check on a ReZero block whose gates are 1 and whose FFN is ReLU then 2·I (fc1 = I,
  // fc2 = 2·I, no biases), in float64: the FFN reads x and writes F = 2·relu(x). Two tokens:
  //   x₁ = (1, 2, 2):  F₁ = (2, 4, 4),  cos = 1
  //   x₂ = (3, −4, 0): F₂ = (6, 0, 0),  cos = 18 / (5·6) = 0.6
  // ‖x‖ = √(9 + 25) = √34, ‖F‖ = √(36 + 36) = √72, mean cosine 0.8.
  nn::TransformerBlockConfig c;
  c.d_model = 3;
  c.n_heads = 1;
  c.d_ff = 3;
  c.activation = nn::Activation::relu;
  c.placement = nn::Placement::rezero;
  c.dtype = DType::float64;
  nn::TransformerBlock block(c);
  block.attn_residual->scale.fill_(0.0);  // the attention sublayer writes nothing: the FFN sees x
  block.ffn_residual->scale.fill_(1.0);
  block.ffn->fc1->weight.copy_(tensor({1, 0, 0, 0, 1, 0, 0, 0, 1}, {3, 3}, DType::float64));
  block.ffn->fc2->weight.copy_(tensor({2, 0, 0, 0, 2, 0, 0, 0, 2}, {3, 3}, DType::float64));
  block.ffn->fc1->bias.fill_(0.0);
  block.ffn->fc2->bias.fill_(0.0);
  const Tensor x = tensor({1, 2, 2, 3, -4, 0}, {1, 2, 3}, DType::float64);
  {
    WriteRatioRecorder on_block(block);
    (void)block.forward(x);
    const auto r = on_block.writes();
    REQUIRE(r.size() == 2);
    CHECK(r[1].path == "ffn_residual");
    CHECK(r[1].input_norm == Approx(std::sqrt(34.0)).epsilon(1e-14));
    CHECK(r[1].output_norm == Approx(std::sqrt(72.0)).epsilon(1e-14));
    CHECK(r[1].ratio == Approx(std::sqrt(72.0 / 34.0)).epsilon(1e-14));
    CHECK(r[1].read_write_cosine == Approx(0.8).epsilon(1e-14));
  }
  // the recorder's hooks are gone with it: the block runs as before, and nothing more is recorded
  CHECK(block.forward(x).shape() == Shape{1, 2, 3});
}
