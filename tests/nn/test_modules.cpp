// test_modules.cpp — the layers of nn/: float64 gradchecks over input and parameters of Linear,
// Embedding, LayerNorm, RMSNorm, AdaLN, FeedForward and MultiHeadAttention (self and cross, with
// masks); MultiHeadAttention against a naive composition of ops; Dropout modes; initialization
// and its reproducibility; error messages.
#include <cmath>
#include <string>
#include <vector>

#include "nn/nn_helpers.hpp"
#include "support/gradcheck_catch.hpp"

using namespace tapegrad;
using Catch::Contains;
using tapegrad::testing::max_abs_diff;
using tapegrad::testing::param;
using tapegrad::testing::randomize_;
using tapegrad::testing::randomize_parameters_;
using tapegrad::testing::std_of;
using tapegrad::testing::with_parameters;

namespace {

constexpr DType f64 = DType::float64;
using L = const TensorList&;

// (B, T) int64 padding mask, 1 = padded: row b pads its last b + 1 positions, never position 0.
Tensor padding_mask(std::int64_t B, std::int64_t T) {
  std::vector<double> m(B * T, 0.0);
  for (std::int64_t b = 0; b < B; ++b)
    for (std::int64_t t = std::max<std::int64_t>(T - (b + 1), 1); t < T; ++t) m[b * T + t] = 1;
  return tensor(m, {B, T}, DType::int64);
}

// (Tq, Tk) mask with 1 where key j is in the future of query i.
Tensor future_mask(std::int64_t Tq, std::int64_t Tk) {
  std::vector<double> m(Tq * Tk, 0.0);
  for (std::int64_t i = 0; i < Tq; ++i)
    for (std::int64_t j = i + 1; j < Tk; ++j) m[i * Tk + j] = 1;
  return tensor(m, {Tq, Tk}, DType::int64);
}

// MultiHeadAttention written out with primitive ops and the module's own weights:
//   out = out_proj(concat_h softmax(q_h·k_hᵀ/√D + masks)·v_h)
// memory undefined: self-attention (fused qkv); otherwise cross-attention (q_proj, kv_proj).
// The qk-norm of naive_attention, by its formula: LayerNorm or RMSNorm over the head dim.
Tensor naive_head_norm(const nn::MultiHeadAttention& m, const Tensor& t, const nn::Norm& norm) {
  const double eps = m.options.qk_norm_eps();
  if (m.options.qk_norm() == nn::QkNorm::rmsnorm)
    return mul(div(t, sqrt(add(mean(mul(t, t), {-1}, true), eps))), static_cast<const nn::RMSNorm&>(norm).weight);
  const auto& ln = static_cast<const nn::LayerNorm&>(norm);
  const Tensor centered = sub(t, mean(t, {-1}, true));
  const Tensor y = div(centered, sqrt(add(mean(mul(centered, centered), {-1}, true), eps)));
  return ln.bias.defined() ? add(mul(y, ln.weight), ln.bias) : mul(y, ln.weight);
}

// RoPE by its formula on (B, heads, T, D), half-split pairs: x·cos + rotate_half(x)·sin, the
// angles (position + t)·θ^(−2i/D) written out.
Tensor naive_rope(const Tensor& t, double theta, std::int64_t position) {
  const std::int64_t T = t.size(2), D = t.size(3);
  std::vector<double> c(T * D), s(T * D);
  for (std::int64_t p = 0; p < T; ++p)
    for (std::int64_t i = 0; i < D; ++i) {
      const double angle = double(position + p) * std::pow(theta, -2.0 * double(i % (D / 2)) / double(D));
      c[p * D + i] = std::cos(angle);
      s[p * D + i] = std::sin(angle);
    }
  const Tensor rotated = cat({neg(narrow(t, 3, D / 2, D / 2)), narrow(t, 3, 0, D / 2)}, 3);
  return add(mul(t, tensor(c, {T, D}, t.dtype())), mul(rotated, tensor(s, {T, D}, t.dtype())));
}

// Attention written out from the module's weights: the projections, the heads (key/value heads
// repeated for their query groups), qk-norm and rope when the module has them, masked softmax.
Tensor naive_attention(const nn::MultiHeadAttention& m, const Tensor& x, const Tensor& memory,
                       const Tensor& key_padding_mask, bool causal, std::int64_t position = 0) {
  const std::int64_t C = m.options.d_model(), H = m.options.n_heads(), Hkv = m.options.kv_heads(), D = C / H;
  Tensor q, k, v;
  if (!memory.defined()) {
    const Tensor qkv = linear(x, m.qkv->weight, m.qkv->bias);  // (B, T, C + 2·Hkv·D)
    q = narrow(qkv, 2, 0, C);
    k = narrow(qkv, 2, C, Hkv * D);
    v = narrow(qkv, 2, C + Hkv * D, Hkv * D);
  } else {
    q = linear(x, m.q_proj->weight, m.q_proj->bias);              // (B, Tq, C)
    const Tensor kv = linear(memory, m.kv_proj->weight, m.kv_proj->bias);  // (B, Tk, 2·Hkv·D)
    k = narrow(kv, 2, 0, Hkv * D);
    v = narrow(kv, 2, Hkv * D, Hkv * D);
  }
  auto heads = [&](const Tensor& t, std::int64_t n) {  // (B, T, n·D) -> (B, n, T, D)
    return t.reshape({t.size(0), t.size(1), n, D}).transpose(1, 2);
  };
  auto repeat_kv = [&](const Tensor& t) {  // (B, Hkv, T, D) -> (B, H, T, D): kv head h / (H / Hkv)
    std::vector<Tensor> parts;
    for (std::int64_t h = 0; h < H; ++h) parts.push_back(narrow(t, 1, h / (H / Hkv), 1));
    return cat(parts, 1);
  };
  Tensor qh = heads(q, H), kh = heads(k, Hkv);
  if (m.q_norm) qh = naive_head_norm(m, qh, *m.q_norm), kh = naive_head_norm(m, kh, *m.k_norm);
  if (m.options.rope()) {
    REQUIRE_FALSE(m.options.rope_interleaved());  // written for the half-split layout
    qh = naive_rope(qh, m.options.rope_theta(), position), kh = naive_rope(kh, m.options.rope_theta(), position);
  }
  const std::int64_t B = x.size(0), Tq = q.size(1), Tk = k.size(1);
  Tensor scores = mul(matmul(qh, repeat_kv(kh).transpose(2, 3)), 1.0 / std::sqrt(double(D)));  // (B, H, Tq, Tk)
  if (causal) scores = masked_fill(scores, future_mask(Tq, Tk), -INFINITY);
  if (key_padding_mask.defined()) scores = masked_fill(scores, key_padding_mask.reshape({B, 1, 1, Tk}), -INFINITY);
  const Tensor out = matmul(softmax(scores, -1), repeat_kv(heads(v, Hkv)));  // (B, H, Tq, D)
  return linear(out.transpose(1, 2).reshape({B, Tq, C}), m.out_proj->weight, m.out_proj->bias);
}

}  // namespace

TEST_CASE("Linear passes gradcheck with and without bias, on 2-d and 3-d inputs", "[modules][linear]") {
  manual_seed(1);
  nn::Linear with_bias(nn::LinearOptions(4, 3).dtype(f64));
  nn::Linear no_bias(nn::LinearOptions(4, 3).bias(false).dtype(f64));
  CHECK_FALSE(no_bias.bias.defined());
  CHECK(no_bias.parameters().size() == 1);
  for (nn::Linear* lin : {&with_bias, &no_bias}) {
    INFO("bias " << lin->options.bias());
    CHECK_GRADCHECK([&](L in) { return lin->forward(in[0]); }, with_parameters({param({2, 4}, 2)}, *lin));
    CHECK_GRADCHECK([&](L in) { return lin->forward(in[0]); }, with_parameters({param({2, 3, 4}, 3)}, *lin));
  }
  // y = x·Wᵀ + b, written with matmul
  const Tensor x = param({2, 3, 4}, 4);
  CHECK_CLOSE(with_bias.forward(x), add(matmul(x, with_bias.weight.transpose(0, 1)), with_bias.bias), 1e-14);
  CHECK_CLOSE(no_bias.forward(x), matmul(x, no_bias.weight.transpose(0, 1)), 1e-14);
  CHECK(with_bias.forward(x).shape() == Shape{2, 3, 3});
}

TEST_CASE("Embedding looks rows up and scatter-adds repeated indices", "[modules][embedding]") {
  manual_seed(2);
  nn::Embedding emb(nn::EmbeddingOptions(5, 3).dtype(f64));
  const Tensor indices = tensor({0, 2, 2, 4, 0, 2}, {2, 3}, DType::int64);
  const Tensor y = emb.forward(indices);
  REQUIRE(y.shape() == Shape{2, 3, 3});
  const std::vector<double> w = emb.weight.to_vector(), out = y.to_vector();
  const std::vector<std::int64_t> idx = indices.to_vector<std::int64_t>();
  for (std::size_t n = 0; n < idx.size(); ++n)
    for (std::size_t c = 0; c < 3; ++c) CHECK(out[n * 3 + c] == w[idx[n] * 3 + c]);

  CHECK_GRADCHECK([&](L) { return emb.forward(indices); }, {emb.weight});
  // d sum(y) / d weight[r, c] = number of times row r is used
  emb.zero_grad();
  y.sum().backward();
  const std::vector<double> counts = {2, 2, 2, 0, 0, 0, 3, 3, 3, 0, 0, 0, 1, 1, 1};
  CHECK(emb.weight.grad().to_vector() == counts);
}

TEST_CASE("LayerNorm and RMSNorm modules pass gradcheck", "[modules][norm]") {
  const Tensor x = param({2, 3, 4}, 10, 2.0);
  SECTION("LayerNorm with affine (moved away from 1 and 0)") {
    nn::LayerNorm ln(nn::NormOptions(4).dtype(f64));
    randomize_parameters_(ln, 11);
    CHECK_GRADCHECK([&](L in) { return ln.forward(in[0]); }, with_parameters({x}, ln));
    CHECK_CLOSE(ln.forward(x), layer_norm(x, {4}, ln.weight, ln.bias, 1e-5), 0.0);
  }
  SECTION("LayerNorm without affine, and with weight only") {
    nn::LayerNorm plain(nn::NormOptions(4).elementwise_affine(false).dtype(f64));
    CHECK(plain.parameters().empty());
    CHECK_GRADCHECK([&](L in) { return plain.forward(in[0]); }, {x});
    nn::LayerNorm weight_only(nn::NormOptions(4).bias(false).dtype(f64));
    CHECK(weight_only.parameters().size() == 1);
    randomize_parameters_(weight_only, 12);
    CHECK_GRADCHECK([&](L in) { return weight_only.forward(in[0]); }, with_parameters({x}, weight_only));
  }
  SECTION("RMSNorm with and without weight") {
    nn::RMSNorm rms(nn::NormOptions(4).eps(1e-6).dtype(f64));
    randomize_parameters_(rms, 13);
    CHECK_GRADCHECK([&](L in) { return rms.forward(in[0]); }, with_parameters({x}, rms));
    CHECK_CLOSE(rms.forward(x), rms_norm(x, {4}, rms.weight, 1e-6), 0.0);
    nn::RMSNorm plain(nn::NormOptions(4).elementwise_affine(false).dtype(f64));
    CHECK(plain.parameters().empty());
    CHECK_GRADCHECK([&](L in) { return plain.forward(in[0]); }, {x});
  }
}

TEST_CASE("AdaLN passes gradcheck and equals its formula", "[modules][adaln]") {
  manual_seed(20);
  const Tensor x = param({2, 3, 4}, 21), cond = param({2, 5}, 22);
  nn::AdaLN ada(nn::AdaLNOptions(4, 5).dtype(f64));
  CHECK(ada.modulation->weight.shape() == Shape{8, 5});
  // over x, the condition and the modulation's weight and bias
  CHECK_GRADCHECK([&](L in) { return ada.forward(in[0], in[1]); }, with_parameters({x, cond}, ada));
  // on a 2-d (B, C) input too
  CHECK_GRADCHECK([&](L in) { return ada.forward(in[0], in[1]); }, with_parameters({param({2, 4}, 23), cond}, ada));

  // [shift, scale] = Linear(SiLU(c)),  y = LN(x)·(1 + scale) + shift
  const Tensor mod = linear(silu(cond), ada.modulation->weight, ada.modulation->bias);  // (B, 2C)
  const Tensor shift = narrow(mod, 1, 0, 4).reshape({2, 1, 4}), scale = narrow(mod, 1, 4, 4).reshape({2, 1, 4});
  const Tensor expected = add(mul(layer_norm(x, {4}, Tensor(), Tensor(), 1e-6), add(scale, 1.0)), shift);
  CHECK_CLOSE(ada.forward(x, cond), expected, 1e-13);
  CHECK(max_abs_diff(ada.forward(x, cond), layer_norm(x, {4}, Tensor(), Tensor(), 1e-6)) > 1e-3);
}

TEST_CASE("AdaLN with zero_init is a plain layer_norm that still learns its modulation", "[modules][adaln]") {
  const Tensor x = param({2, 3, 4}, 24), cond = param({2, 3}, 25);
  nn::AdaLN ada(nn::AdaLNOptions(4, 3).zero_init(true).dtype(f64));
  for (double w : ada.modulation->weight.to_vector()) CHECK(w == 0.0);
  for (double b : ada.modulation->bias.to_vector()) CHECK(b == 0.0);
  CHECK_CLOSE(ada.forward(x, cond), layer_norm(x, {4}, Tensor(), Tensor(), 1e-6), 0.0);
  CHECK_GRADCHECK([&](L in) { return ada.forward(in[0], in[1]); }, with_parameters({x, cond}, ada));
  // the modulation weights get a gradient although they are zero
  mul(ada.forward(x, cond), param({2, 3, 4}, 26).detach()).sum().backward();
  CHECK(max_abs_diff(ada.modulation->weight.grad(), zeros({8, 3}, f64)) > 1e-3);
}

TEST_CASE("FeedForward passes gradcheck for every activation and equals its formula", "[modules][ffn]") {
  const Tensor x = param({2, 3, 4}, 30);
  for (nn::Activation a : {nn::Activation::gelu, nn::Activation::gelu_tanh, nn::Activation::relu,
                           nn::Activation::silu, nn::Activation::swiglu}) {
    INFO("activation " << nn::activation_name(a));
    manual_seed(31);
    nn::FeedForward ffn(nn::FeedForwardOptions(4, 6).activation(a).dtype(f64));
    CHECK((ffn.fc_gate != nullptr) == (a == nn::Activation::swiglu));
    CHECK_GRADCHECK([&](L in) { return ffn.forward(in[0]); }, with_parameters({x}, ffn));
    const Tensor h1 = ffn.fc1->forward(x);
    Tensor h;
    switch (a) {
      case nn::Activation::gelu: h = gelu(h1); break;
      case nn::Activation::gelu_tanh: h = gelu(h1, "tanh"); break;
      case nn::Activation::relu: h = relu(h1); break;
      case nn::Activation::silu: h = mul(h1, sigmoid(h1)); break;
      default: h = mul(mul(h1, sigmoid(h1)), ffn.fc_gate->forward(x)); break;  // SwiGLU
    }
    CHECK_CLOSE(ffn.forward(x), ffn.fc2->forward(h), 1e-14);
  }
  nn::FeedForward swiglu(nn::FeedForwardOptions(4, 6).activation(nn::Activation::swiglu));
  std::vector<std::string> names;
  for (const auto& [n, _] : swiglu.named_parameters()) names.push_back(n);
  CHECK(names == std::vector<std::string>{"fc1.weight", "fc1.bias", "fc_gate.weight", "fc_gate.bias", "fc2.weight",
                                          "fc2.bias"});
  // without bias
  nn::FeedForward no_bias(nn::FeedForwardOptions(4, 6).bias(false).dtype(f64));
  CHECK(no_bias.num_parameters() == 2 * 4 * 6);
  CHECK_GRADCHECK([&](L in) { return no_bias.forward(in[0]); }, with_parameters({x}, no_bias));
}

TEST_CASE("MultiHeadAttention self-attention matches the naive composition and passes gradcheck",
          "[modules][attention]") {
  const Tensor x = param({2, 3, 4}, 40);
  const Tensor pad = padding_mask(2, 3);
  for (bool causal : {false, true}) {
    manual_seed(41);
    nn::MultiHeadAttention mha(nn::MultiHeadAttentionOptions(4, 2).causal(causal).dtype(f64));
    INFO("causal " << causal);
    CHECK_CLOSE(mha.forward(x), naive_attention(mha, x, Tensor(), Tensor(), causal), 1e-13);
    CHECK_CLOSE(mha.forward(x, pad), naive_attention(mha, x, Tensor(), pad, causal), 1e-13);
    CHECK_GRADCHECK([&](L in) { return mha.forward(in[0]); }, with_parameters({x}, mha));
    CHECK_GRADCHECK([&](L in) { return mha.forward(in[0], pad); }, with_parameters({x}, mha));
  }
  // the masks matter: causal output at t = 0 ignores later tokens, padding changes the output
  manual_seed(42);
  nn::MultiHeadAttention causal(nn::MultiHeadAttentionOptions(4, 2).causal(true).dtype(f64));
  Tensor x2 = x.detach().clone();
  x2.data<double>()[2 * 4] += 1.0;  // token 2 of batch 0
  const Tensor y = causal.forward(x), y2 = causal.forward(x2);
  CHECK_CLOSE(narrow(y, 1, 0, 2), narrow(y2, 1, 0, 2), 0.0);
  CHECK(max_abs_diff(narrow(y, 1, 2, 1), narrow(y2, 1, 2, 1)) > 1e-6);
  CHECK(max_abs_diff(causal.forward(x, pad), y) > 1e-6);
  // one head, and no bias
  nn::MultiHeadAttention one_head(nn::MultiHeadAttentionOptions(4, 1).bias(false).dtype(f64));
  CHECK(one_head.num_parameters() == 4 * 4 * 4);
  CHECK_CLOSE(one_head.forward(x, pad), naive_attention(one_head, x, Tensor(), pad, false), 1e-13);
}

TEST_CASE("MultiHeadAttention with grouped-query heads, QK-norm and RoPE matches its formula, gradcheck",
          "[modules][attention][gqa][rotary]") {
  const Tensor x = param({2, 5, 8}, 60), memory = param({2, 3, 8}, 61);
  const Tensor pad = padding_mask(2, 5);
  for (std::int64_t kv_heads : {4, 2, 1})
    for (nn::QkNorm qk : {nn::QkNorm::none, nn::QkNorm::rmsnorm, nn::QkNorm::layernorm})
      for (bool rope : {false, true}) {
        INFO("n_kv_heads " << kv_heads << ", qk_norm " << nn::qk_norm_name(qk) << ", rope " << rope);
        manual_seed(62);
        auto options = nn::MultiHeadAttentionOptions(8, 4).n_kv_heads(kv_heads).qk_norm(qk).dtype(f64);
        nn::MultiHeadAttention self(options.causal(true).rope(rope).rope_theta(50.0));
        randomize_parameters_(self, 63);  // norm weights away from 1
        CHECK(self.qkv->weight.size(0) == 8 + 2 * kv_heads * 2);
        CHECK_CLOSE(self.forward(x, pad), naive_attention(self, x, Tensor(), pad, true), 1e-13);
        if (rope)  // a continued sequence: positions 7.. instead of 0..
          CHECK_CLOSE(self.forward(x, pad, 7), naive_attention(self, x, Tensor(), pad, true, 7), 1e-13);
        if (!rope) {
          nn::MultiHeadAttention cross(nn::MultiHeadAttentionOptions(8, 4).n_kv_heads(kv_heads).qk_norm(qk).cross(true).dtype(f64));
          randomize_parameters_(cross, 64);
          CHECK_CLOSE(cross.forward_cross(x, memory), naive_attention(cross, x, memory, Tensor(), false), 1e-13);
        }
      }
  manual_seed(65);
  nn::MultiHeadAttention gqa(nn::MultiHeadAttentionOptions(8, 4).n_kv_heads(2).qk_norm(nn::QkNorm::rmsnorm).causal(true).rope(true).dtype(f64));
  randomize_parameters_(gqa, 66);
  CHECK_GRADCHECK([&](L in) { return gqa.forward(in[0], pad, 3); }, with_parameters({param({2, 5, 8}, 67)}, gqa));
  // errors name the option and its value
  REQUIRE_THROWS_WITH(nn::MultiHeadAttention(nn::MultiHeadAttentionOptions(8, 4).n_kv_heads(3)),
                      Catch::Contains("n_kv_heads (3) must divide n_heads (4)"));
  REQUIRE_THROWS_WITH(nn::MultiHeadAttention(nn::MultiHeadAttentionOptions(6, 2).rope(true)),
                      Catch::Contains("head dim d_model / n_heads = 3 must be even"));
  REQUIRE_THROWS_WITH(nn::MultiHeadAttention(nn::MultiHeadAttentionOptions(8, 2).rope(true).cross(true)),
                      Catch::Contains("rope applies to self-attention"));
  REQUIRE_THROWS_WITH(nn::qk_norm_from_name("batchnorm"), Catch::Contains("unknown qk_norm 'batchnorm' (expected none, layernorm or rmsnorm)"));
}

TEST_CASE("MultiHeadAttention cross-attention matches the naive composition and passes gradcheck",
          "[modules][attention]") {
  manual_seed(50);
  const Tensor x = param({2, 2, 4}, 51);       // Tq = 2
  const Tensor memory = param({2, 4, 6}, 52);  // Tk = 4, kv_dim = 6
  const Tensor pad = padding_mask(2, 4);
  nn::MultiHeadAttention mha(nn::MultiHeadAttentionOptions(4, 2).cross(true).kv_dim(6).dtype(f64));
  CHECK(mha.qkv == nullptr);
  CHECK(mha.kv_proj->weight.shape() == Shape{8, 6});
  CHECK(mha.forward_cross(x, memory).shape() == Shape{2, 2, 4});
  CHECK_CLOSE(mha.forward_cross(x, memory), naive_attention(mha, x, memory, Tensor(), false), 1e-13);
  CHECK_CLOSE(mha.forward_cross(x, memory, pad), naive_attention(mha, x, memory, pad, false), 1e-13);
  CHECK(max_abs_diff(mha.forward_cross(x, memory, pad), mha.forward_cross(x, memory)) > 1e-6);
  CHECK_GRADCHECK([&](L in) { return mha.forward_cross(in[0], in[1], pad); }, with_parameters({x, memory}, mha));
  // kv_dim 0 means d_model
  nn::MultiHeadAttention same_dim(nn::MultiHeadAttentionOptions(4, 2).cross(true).dtype(f64));
  const Tensor memory4 = param({2, 3, 4}, 53);
  CHECK_CLOSE(same_dim.forward_cross(x, memory4), naive_attention(same_dim, x, memory4, Tensor(), false), 1e-13);
  CHECK_GRADCHECK([&](L in) { return same_dim.forward_cross(in[0], in[1]); },
                  with_parameters({x, memory4}, same_dim));
}

TEST_CASE("Dropout module drops in training and is the identity in eval", "[modules][dropout]") {
  Generator gen(60);
  nn::Dropout drop(0.5, &gen);
  const Tensor x = full({2000}, 3.0, f64).requires_grad_();
  CHECK(drop.is_training());
  const Tensor y = drop.forward(x);
  std::int64_t dropped = 0;
  for (double v : y.to_vector()) {
    if (v == 0.0) ++dropped;
    else CHECK(v == 6.0);  // kept values scaled by 1/(1-p)
  }
  CHECK(dropped > 850);
  CHECK(dropped < 1150);
  // the gradient is the same scaled mask
  y.sum().backward();
  CHECK(x.grad().to_vector() == mul(y, 1.0 / 3.0).to_vector());
  // a fresh draw each call in training
  CHECK(drop.forward(x).to_vector() != y.to_vector());

  drop.eval();
  CHECK(drop.forward(x).to_vector() == x.to_vector());
  nn::Dropout none(0.0);
  CHECK(none.forward(x).to_vector() == x.to_vector());
  REQUIRE_THROWS_AS(nn::Dropout(1.0), ValueError);
  REQUIRE_THROWS_WITH(nn::Dropout(-0.1), Contains("Dropout: p must be in [0, 1)"));
}

TEST_CASE("Modules initialize as PyTorch does, reproducibly from the seed", "[modules][init]") {
  manual_seed(70);
  nn::Linear lin(64, 32);
  const double bound = 1.0 / 8.0;  // 1/sqrt(in)
  double lo = 1, hi = -1;
  for (double w : lin.weight.to_vector()) {
    lo = std::min(lo, w);
    hi = std::max(hi, w);
  }
  CHECK(lo >= -bound);
  CHECK(hi <= bound);
  CHECK(lo < -0.95 * bound);  // the whole range is used, not a narrower one
  CHECK(hi > 0.95 * bound);
  CHECK(std_of(lin.weight) == Approx(bound / std::sqrt(3.0)).epsilon(0.05));
  for (double b : lin.bias.to_vector()) CHECK(std::abs(b) <= bound);
  CHECK(lin.weight.dtype() == DType::float32);

  nn::LayerNorm ln(6);
  CHECK(ln.weight.to_vector() == std::vector<double>(6, 1.0));
  CHECK(ln.bias.to_vector() == std::vector<double>(6, 0.0));
  CHECK(nn::RMSNorm(6).weight.to_vector() == std::vector<double>(6, 1.0));
  CHECK(ln.weight.requires_grad());

  nn::Embedding emb(200, 50);
  CHECK(std_of(emb.weight) == Approx(1.0).epsilon(0.05));

  auto build = [](std::uint64_t seed) {
    manual_seed(seed);
    nn::Linear a(5, 3);
    nn::Embedding e(7, 4);
    std::vector<double> all = a.weight.to_vector();
    for (double v : a.bias.to_vector()) all.push_back(v);
    for (double v : e.weight.to_vector()) all.push_back(v);
    return all;
  };
  CHECK(build(9) == build(9));
  CHECK(build(9) != build(10));
}

TEST_CASE("Activations: names, Act module, swiglu rejected", "[modules][activation]") {
  for (nn::Activation a : {nn::Activation::relu, nn::Activation::gelu, nn::Activation::gelu_tanh,
                           nn::Activation::silu, nn::Activation::tanh, nn::Activation::swiglu})
    CHECK(nn::activation_from_name(nn::activation_name(a)) == a);
  REQUIRE_THROWS_WITH(nn::activation_from_name("swish"), Contains("unknown activation 'swish'"));
  const Tensor x = param({2, 3}, 80);
  CHECK_CLOSE(nn::Act(nn::Activation::gelu_tanh).forward(x), gelu(x, "tanh"), 0.0);
  CHECK_CLOSE(nn::Act(nn::Activation::tanh)(x), tanh(x), 0.0);
  REQUIRE_THROWS_AS(nn::Act(nn::Activation::swiglu), ValueError);
  REQUIRE_THROWS_WITH(nn::Act(nn::Activation::swiglu), Contains("Act: swiglu is not elementwise; use FeedForward"));
  REQUIRE_THROWS_WITH(nn::apply_activation(nn::Activation::swiglu, x), Contains("swiglu is not elementwise"));
}

TEST_CASE("Modules reject bad shapes and settings with clear messages", "[modules][errors]") {
  nn::Linear lin(3, 4);
  REQUIRE_THROWS_AS(lin.forward(ones({2, 5})), ShapeError);
  REQUIRE_THROWS_WITH(lin.forward(ones({2, 5})),
                      Contains("linear: input of shape [2, 5] does not match weight of shape [4, 3]"));
  REQUIRE_THROWS_AS(lin.forward(ones({2, 3}, f64)), DTypeError);
  REQUIRE_THROWS_WITH(nn::Linear(-1, 2), Contains("Linear: feature counts must be >= 0"));
  REQUIRE_THROWS_WITH(nn::Embedding(0, 2), Contains("Embedding: num_embeddings and embedding_dim must be positive"));
  REQUIRE_THROWS_WITH(nn::LayerNorm(0), Contains("LayerNorm: dim must be positive, got 0"));
  REQUIRE_THROWS_WITH(nn::RMSNorm(4, 0.0), Contains("RMSNorm: eps must be positive"));

  REQUIRE_THROWS_AS(nn::MultiHeadAttention(nn::MultiHeadAttentionOptions(6, 4)), ValueError);
  REQUIRE_THROWS_WITH(nn::MultiHeadAttention(nn::MultiHeadAttentionOptions(6, 4)),
                      Contains("MultiHeadAttention: d_model (6) must be a positive multiple of n_heads (4)"));
  REQUIRE_THROWS_WITH(nn::MultiHeadAttention(nn::MultiHeadAttentionOptions(4, 2).attn_dropout(1.0)),
                      Contains("attn_dropout must be in [0, 1)"));
  nn::MultiHeadAttention self(nn::MultiHeadAttentionOptions(4, 2));
  REQUIRE_THROWS_AS(self.forward(ones({3, 4})), ShapeError);
  REQUIRE_THROWS_WITH(self.forward(ones({3, 4})), Contains("MultiHeadAttention: x must be (B, T, 4), got [3, 4]"));
  REQUIRE_THROWS_WITH(self.forward(ones({2, 3, 5})), Contains("x must be (B, T, 4), got [2, 3, 5]"));
  REQUIRE_THROWS_WITH(self.forward_cross(ones({2, 3, 4}), ones({2, 3, 4})),
                      Contains("this module does self-attention; call forward"));
  nn::MultiHeadAttention cross(nn::MultiHeadAttentionOptions(4, 2).cross(true).kv_dim(6));
  REQUIRE_THROWS_WITH(cross.forward(ones({2, 3, 4})), Contains("this module does cross-attention; call forward_cross"));
  REQUIRE_THROWS_WITH(cross.forward_cross(ones({2, 3, 4}), ones({2, 5, 4})),
                      Contains("MultiHeadAttention: memory must be (B, T, 6), got [2, 5, 4]"));
  REQUIRE_THROWS_WITH(cross.forward_cross(ones({2, 3, 4}), ones({3, 5, 6})),
                      Contains("MultiHeadAttention: batch sizes differ, x [2, 3, 4] and memory [3, 5, 6]"));

  nn::AdaLN ada(4, 3);
  REQUIRE_THROWS_AS(ada.forward(ones({2, 5, 4}), ones({2, 5})), ShapeError);
  REQUIRE_THROWS_WITH(ada.forward(ones({2, 5, 4}), ones({2, 5})),
                      Contains("AdaLN: cond must be (B, cond_dim = 3), got [2, 5]"));
  REQUIRE_THROWS_WITH(ada.forward(ones({2, 5, 4}), Tensor()), Contains("got none"));
  REQUIRE_THROWS_WITH(ada.forward(ones({3, 5, 4}), ones({2, 3})),
                      Contains("AdaLN: x must be (B, ..., 4) with B = 2 as cond, got [3, 5, 4]"));
  REQUIRE_THROWS_WITH(nn::AdaLN(4, 0), Contains("AdaLN: dim and cond_dim must be positive"));
  REQUIRE_THROWS_WITH(nn::modulate(ones({2, 3, 4}), ones({2, 3}), ones({2, 3})),
                      Contains("modulate: x [2, 3, 4] needs shift and scale of shape (B, C) = [2, 4]"));
  REQUIRE_THROWS_WITH(nn::FeedForward(nn::FeedForwardOptions(4, 0)),
                      Contains("FeedForward: dim and hidden must be positive"));
}
