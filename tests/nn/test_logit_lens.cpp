// test_logit_lens.cpp — the residual stream at every depth (StreamRecorder) and the logit lens
// (nn/diagnostics/logit_lens.hpp): the last layer is the model's own loss bit for bit, layer 0
// equals a hand computation from the embedding tables (through the final norm in Pre-LN, as it is
// in Post-LN; tied and untied heads), and the sums over batches are evaluate_lm's.
#include <cmath>
#include <vector>

#include <catch2/catch.hpp>
#include <tapegrad/tapegrad.hpp>

#include "nn/nn_helpers.hpp"

using namespace tapegrad;
using namespace tapegrad::testing;
using Catch::Contains;

namespace {

constexpr std::int64_t kV = 11;

// A float64 LM of 3 blocks, every parameter random (so no LayerNorm weight is 1, no bias 0).
std::shared_ptr<nn::TransformerLM> lm_of(const char* placement, bool tied = true) {
  nn::TransformerLMConfig c = tiny_lm(kV, 8, 3);
  c.block.dtype = DType::float64;
  c.block.placement = nn::placement_from_name(placement);
  c.tie_weights = tied;
  manual_seed(3);
  auto lm = std::make_shared<nn::TransformerLM>(c);
  randomize_parameters_(*lm, 40, 0.3);
  return lm;
}

// A batch (B = 2, T = 4) and its next tokens.
Tensor batch_tokens() { return Tensor::from_vector<std::int64_t>({1, 4, 2, 9, 0, 7, 3, 5}, {2, 4}); }
Tensor batch_targets() { return Tensor::from_vector<std::int64_t>({4, 2, 9, 0, 7, 3, 5, 10}, {2, 4}); }

// Layer 0 of the lens by hand: h0 = E[token] + P[t]; n = LN(h0)·γ + β over C (Pre-LN; Post-LN:
// n = h0); logits[v] = Σ_c n_c·W[v, c] (W = E tied, lm_head untied); the mean over tokens of
// log Σ_v exp(logits[v]) − logits[target].
double layer0_by_hand(nn::TransformerLM& lm) {
  const std::int64_t C = lm.config.block.d_model;
  const std::vector<double> E = lm.tok_emb->weight.to_vector(), P = lm.pos_emb->weight.to_vector();
  const std::vector<double> W = lm.lm_head ? lm.lm_head->weight.to_vector() : E;
  const auto* ln = dynamic_cast<nn::LayerNorm*>(lm.final_norm.get());
  REQUIRE((ln != nullptr) == (lm.final_norm != nullptr));
  const std::vector<std::int64_t> tok = batch_tokens().to_vector<std::int64_t>();
  const std::vector<std::int64_t> tgt = batch_targets().to_vector<std::int64_t>();
  double total = 0;
  for (std::size_t n = 0; n < tok.size(); ++n) {
    const std::size_t t = n % 4;
    std::vector<double> h(C);
    for (std::int64_t c = 0; c < C; ++c) h[c] = E[tok[n] * C + c] + P[t * C + c];
    if (ln) {
      double mean = 0, var = 0;
      for (double v : h) mean += v / static_cast<double>(C);
      for (double v : h) var += (v - mean) * (v - mean) / static_cast<double>(C);
      const std::vector<double> g = ln->weight.to_vector(), b = ln->bias.to_vector();
      for (std::int64_t c = 0; c < C; ++c) h[c] = (h[c] - mean) / std::sqrt(var + ln->options.eps()) * g[c] + b[c];
    }
    std::vector<double> logits(kV, 0.0);
    double top = -INFINITY;
    for (std::int64_t v = 0; v < kV; ++v) {
      for (std::int64_t c = 0; c < C; ++c) logits[v] += h[c] * W[v * C + c];
      top = std::max(top, logits[v]);
    }
    double z = 0;
    for (double l : logits) z += std::exp(l - top);
    total += top + std::log(z) - logits[tgt[n]];
  }
  return total / static_cast<double>(tok.size());
}

double model_loss(nn::TransformerLM& lm) {
  NoGradGuard no_grad;
  return cross_entropy(lm.forward(batch_tokens()).reshape({8, kV}), batch_targets().reshape({8})).item();
}

}  // namespace

TEST_CASE("StreamRecorder: the embeddings, then every block's output (the plain stream)", "[diagnostics][logit_lens]") {
  auto lm = lm_of("pre");
  nn::StreamRecorder recorder(*lm);
  CHECK_THROWS_WITH(recorder.streams(), Contains("passed 0 of 3 blocks") && Contains("no forward yet"));
  nn::OutputRecorder outputs(*lm->blocks);
  (void)lm->forward(batch_tokens());
  (void)lm->forward(batch_tokens());  // a second forward replaces the first
  const std::vector<Tensor> streams = recorder.streams();
  REQUIRE(streams.size() == 4);
  const Tensor h0 = add(lm->tok_emb->forward(batch_tokens()), lm->pos_emb->forward(arange(4, DType::int64)));
  CHECK_CLOSE(streams[0], h0, 0.0);
  for (std::size_t l = 1; l < 4; ++l) CHECK(streams[l].to_vector() == outputs.outputs()[2 + l].to_vector());  // the second forward's
  nn::TransformerLM no_blocks(tiny_lm(kV, 8, 0));
  CHECK_THROWS_WITH(nn::StreamRecorder(no_blocks), Contains("no block"));
}

TEST_CASE("logit lens: the last layer is the model's loss, layer 0 the embeddings by hand", "[diagnostics][logit_lens]") {
  for (const char* placement : {"pre", "post"}) {
    for (bool tied : {true, false}) {
      INFO(placement << (tied ? ", tied head" : ", untied head"));
      auto lm = lm_of(placement, tied);
      CHECK((lm->final_norm != nullptr) == (std::string(placement) == "pre"));  // Post-LN decodes h_l as it is
      const std::vector<nn::LensLayer> lens = nn::logit_lens(*lm, batch_tokens(), batch_targets());
      REQUIRE(lens.size() == 4);
      for (std::size_t l = 0; l < 4; ++l) {
        CHECK(lens[l].layer == static_cast<std::int64_t>(l));
        CHECK((lens[l].top1_agreement >= 0 && lens[l].top1_agreement <= 1));
      }
      CHECK(lens[3].loss == model_loss(*lm));  // the same ops on the same stream: the same bits
      CHECK(lens[3].top1_agreement == 1.0);
      CHECK(lens[0].loss == Approx(layer0_by_hand(*lm)).epsilon(1e-12));
      CHECK(lens[1].loss != lens[0].loss);
    }
  }
}

TEST_CASE("logit lens: top-1 agreement counted by hand, ignored targets left out", "[diagnostics][logit_lens]") {
  auto lm = lm_of("pre");
  nn::StreamRecorder recorder(*lm);
  const Tensor logits = lm->forward(batch_tokens());
  const std::vector<Tensor> streams = recorder.streams();
  const nn::Readout readout = nn::lm_readout(*lm);
  CHECK(readout(streams[3]).to_vector() == logits.to_vector());
  // Targets 2 and 5 ignored: 6 tokens count.
  const Tensor targets = Tensor::from_vector<std::int64_t>({4, 2, -100, 0, 7, -100, 5, 10}, {2, 4});
  nn::LogitLens lens;
  lens.add(streams, readout, targets);
  CHECK(lens.tokens() == 6);
  const auto last = argmax(logits, -1).to_vector<std::int64_t>();
  const auto first = argmax(readout(streams[1]), -1).to_vector<std::int64_t>();
  const auto t = targets.to_vector<std::int64_t>();
  double agree = 0;
  for (std::size_t i = 0; i < t.size(); ++i) agree += t[i] != -100 && first[i] == last[i];
  CHECK(lens.layers()[1].top1_agreement == agree / 6);
  CHECK(lens.layers()[3].loss ==
        cross_entropy(logits.reshape({8, kV}), targets.reshape({8}), Reduction::mean, -100).item());
}

TEST_CASE("logit lens over batches: the sums of evaluate_lm", "[diagnostics][logit_lens]") {
  auto lm = lm_of("pre");
  nn::StreamRecorder recorder(*lm);
  const nn::Readout readout = nn::lm_readout(*lm);
  nn::LogitLens lens;
  const Tensor second = Tensor::from_vector<std::int64_t>({3, 3, 8, 1}, {1, 4});
  const Tensor second_targets = Tensor::from_vector<std::int64_t>({3, 8, 1, 6}, {1, 4});
  double sum = 0;
  for (const auto& [tokens, targets] : {std::pair{batch_tokens(), batch_targets()}, std::pair{second, second_targets}}) {
    const Tensor logits = lm->forward(tokens);
    const std::int64_t n = targets.numel();
    sum += cross_entropy(logits.reshape({n, kV}), targets.reshape({n}), Reduction::sum).item();
    lens.add(recorder.streams(), readout, targets);
  }
  CHECK(lens.tokens() == 12);
  CHECK(lens.layers()[3].loss == sum / 12);  // evaluate_lm: Σ over batches, divided once
  // A stack of another depth cannot join the sums; a readout of the wrong shape is named.
  CHECK_THROWS_WITH(lens.add({recorder.streams()[0]}, readout, batch_targets()), Contains("1 layers") && Contains("had 4"));
  nn::LogitLens other;
  CHECK_THROWS_WITH(other.add(recorder.streams(), readout, batch_targets()),
                    Contains("layer 3") && Contains("[1, 4, 11]") && Contains("[2, 4]"));
}

TEST_CASE("lm_readout: a conditional model's final norm needs the classes", "[diagnostics][logit_lens]") {
  nn::TransformerLMConfig c = tiny_lm(kV, 8, 2);
  c.block.dtype = DType::float64;
  c.block.norm = nn::norm_kind_from_name("adaln");
  c.n_classes = 3;
  manual_seed(1);
  nn::TransformerLM lm(c);
  CHECK_THROWS_WITH(nn::lm_readout(lm), Contains("conditional") && Contains("classes"));
  const Tensor classes = Tensor::from_vector<std::int64_t>({2, 0}, {2});
  const auto lens = nn::logit_lens(lm, batch_tokens(), batch_targets(), classes);
  NoGradGuard no_grad;
  const Tensor logits = lm.forward(batch_tokens(), classes);
  CHECK(lens[2].loss == cross_entropy(logits.reshape({8, kV}), batch_targets().reshape({8})).item());
}
