// test_head_writes.cpp — each head's write ‖W_O^h·z_h‖ (nn/diagnostics/head_writes.hpp) against
// a recompute by hand from the attention's own z, the heads adding up to the attention's output,
// the quadrature sum when the heads write to orthogonal dims, and the model's numbers untouched.
#include <cmath>
#include <memory>
#include <vector>

#include <catch2/catch.hpp>
#include <tapegrad/tapegrad.hpp>

#include "nn/nn_helpers.hpp"

using namespace tapegrad;
using namespace tapegrad::testing;
using Catch::Contains;

namespace {

// A float64 self-attention of C = 6 with 3 heads of D = 2, every weight random, no dropout.
std::shared_ptr<nn::MultiHeadAttention> attention(bool bias = true) {
  auto attn = std::make_shared<nn::MultiHeadAttention>(
      nn::MultiHeadAttentionOptions(6, 3).causal(true).bias(bias).dtype(DType::float64));
  randomize_parameters_(*attn, 11);
  return attn;
}

Tensor input() {
  Generator gen(5);
  return randn({2, 4, 6}, gen, DType::float64);  // (B, T, C)
}

}  // namespace

TEST_CASE("head_writes: the heads' writes add up to the output projection", "[diagnostics][head_writes]") {
  const Tensor z = input();  // any (B, T, H·D)
  Generator gen(3);
  const Tensor W = randn({5, 6}, gen, DType::float64);  // W_O (C, H·D): here C = 5
  const std::vector<Tensor> writes = nn::head_writes(z, W, 3);
  REQUIRE(writes.size() == 3);
  Tensor total = writes[0];
  for (std::size_t h = 1; h < writes.size(); ++h) total = add(total, writes[h]);
  CHECK_CLOSE(total, linear(z, W), 1e-12);  // Σ_h W_O^h·z_h = W_O·z
  CHECK_THROWS_WITH(nn::head_writes(z, W, 4), Contains("head_writes") && Contains("[2, 4, 6]") && Contains("[5, 6]"));
  CHECK_THROWS_WITH(nn::head_writes(z, randn({5, 4}, gen, DType::float64), 2), Contains("H = 2"));
}

TEST_CASE("HeadWriteRecorder: each head's norm is ||W_O^h z_h||, computed by hand", "[diagnostics][head_writes]") {
  const auto owner = attention();
  nn::MultiHeadAttention& attn = *owner;
  Tensor z;  // the attention's concat_h(z_h), kept by a hook of our own
  HookHandle keep = attn.out_proj->register_forward_pre_hook([&z](nn::Module&, TensorList& in) { z = in[0]; });
  nn::HeadWriteRecorder recorder(attn);
  REQUIRE(recorder.writes().size() == 1);
  CHECK(recorder.writes()[0].norms.empty());  // no forward yet
  (void)attn.forward(input());
  keep.remove();
  const auto writes = recorder.writes();
  REQUIRE(writes[0].norms.size() == 3);
  CHECK(writes[0].path == "MultiHeadAttention");  // a root module's path is its type
  // write_h[b, t, c] = Σ_d z[b, t, h·D + d]·W_O[c, h·D + d]; its norm over (B, T, C)
  const std::vector<double> zv = z.to_vector(), wv = attn.out_proj->weight.to_vector();
  const std::int64_t tokens = 2 * 4, C = 6, D = 2;
  for (std::int64_t h = 0; h < 3; ++h) {
    double squares = 0;
    for (std::int64_t n = 0; n < tokens; ++n)
      for (std::int64_t c = 0; c < C; ++c) {
        double w = 0;
        for (std::int64_t d = 0; d < D; ++d) w += zv[n * C + h * D + d] * wv[c * C + h * D + d];
        squares += w * w;
      }
    INFO("head " << h);
    CHECK(writes[0].norms[h] == Approx(std::sqrt(squares)).epsilon(1e-12));
  }
}

TEST_CASE("HeadWriteRecorder: heads writing to orthogonal dims add in quadrature", "[diagnostics][head_writes]") {
  // W_O block-diagonal: head h writes only to dims h·D..(h+1)·D − 1, so the writes are
  // orthogonal, ‖Attn(x)‖² = Σ_h ‖W_O^h·z_h‖² (no bias), and each head's norm is that of its dims.
  const auto owner = attention(false);
  nn::MultiHeadAttention& attn = *owner;
  std::vector<double> w(36, 0.0);
  for (std::int64_t c = 0; c < 6; ++c)
    for (std::int64_t k = 0; k < 6; ++k)
      if (c / 2 == k / 2) w[c * 6 + k] = 0.5 + 0.25 * static_cast<double>(c + k);
  attn.out_proj->weight.copy_(tensor(w, {6, 6}, DType::float64));
  nn::HeadWriteRecorder recorder(attn);
  const Tensor out = attn.forward(input());
  const std::vector<double> norms = recorder.writes()[0].norms;
  double quadrature = 0;
  for (std::int64_t h = 0; h < 3; ++h) {
    quadrature += norms[h] * norms[h];
    CHECK(norms[h] == Approx(nn::l2_norm(narrow(out, 2, h * 2, 2))).epsilon(1e-12));
  }
  CHECK(std::sqrt(quadrature) == Approx(nn::l2_norm(out)).epsilon(1e-12));
}

TEST_CASE("HeadWriteRecorder: every attention of a model, and its numbers untouched", "[diagnostics][head_writes]") {
  nn::TransformerLMConfig c = tiny_lm(11, 8, 3);
  c.block.dtype = DType::float64;
  manual_seed(2);
  nn::TransformerLM lm(c);
  const Tensor tokens = Tensor::from_vector<std::int64_t>({1, 2, 3, 4, 5, 6}, {2, 3});
  const Tensor plain = lm.forward(tokens);
  std::vector<nn::HeadWrites> writes;
  Tensor watched;
  {
    nn::HeadWriteRecorder recorder(lm);
    watched = lm.forward(tokens);
    cross_entropy(watched.reshape({6, 11}), tokens.reshape({6})).backward();  // the hooks record no tape
    writes = recorder.writes();
  }
  CHECK(watched.to_vector() == plain.to_vector());  // bit for bit
  REQUIRE(writes.size() == 3);
  CHECK(writes[2].path == "blocks.2.attn");
  for (const auto& w : writes) {
    REQUIRE(w.norms.size() == 2);
    for (double n : w.norms) CHECK((n > 0 && std::isfinite(n)));
  }
}
