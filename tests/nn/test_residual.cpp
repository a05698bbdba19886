// test_residual.cpp — norm placements: each Residual form against its formula written naively;
// every TransformerBlock placement × norm against the block formulas of transformer_block.hpp
// computed by hand from the block's own submodules, and a float64 gradcheck over input,
// condition, memory and all parameters; AdaLN-Zero blocks start as the identity; the
// final-norm rule of TransformerLM and Seq2SeqTransformer; configuration errors.
#include <functional>
#include <string>
#include <vector>

#include "nn/nn_helpers.hpp"
#include "support/gradcheck_catch.hpp"

using namespace tapegrad;
using Catch::Contains;
using nn::NormKind;
using nn::Placement;
using tapegrad::testing::max_abs_diff;
using tapegrad::testing::param;
using tapegrad::testing::randomize_parameters_;
using tapegrad::testing::with_parameters;

namespace {

constexpr DType f64 = DType::float64;
using L = const TensorList&;
using Form = nn::Residual::Form;

constexpr std::int64_t kB = 2, kT = 3, kC = 4, kCond = 3, kTk = 4;

// (B, T) int64, 1 = padded: row 1 pads its last position.
Tensor pad_last_of_row1(std::int64_t T) {
  std::vector<double> m(kB * T, 0.0);
  m[2 * T - 1] = 1;
  return tensor(m, {kB, T}, DType::int64);
}

nn::TransformerBlockConfig block_config(Placement placement, NormKind norm, bool cross) {
  nn::TransformerBlockConfig c;
  c.d_model = kC;
  c.n_heads = 2;
  c.d_ff = 8;
  c.placement = placement;
  c.norm = norm;
  c.causal = true;
  c.cross_attention = cross;
  c.dtype = f64;
  if (norm == NormKind::adaln || norm == NormKind::adaln_zero) c.cond_dim = kCond;
  if (placement == Placement::deepnorm || placement == Placement::pre) c.residual_scale = 1.5;
  return c;
}

std::string describe(Placement p, NormKind n, bool cross) {
  return nn::placement_name(p) + " / " + nn::norm_kind_name(n) + (cross ? " / cross-attention" : "");
}

// LN(h)·(1 + scale) + shift without affine, scale and shift (B, C) broadcast over T.
Tensor hand_modulate(const Tensor& h, const Tensor& shift, const Tensor& scale, double eps) {
  const Tensor normed = layer_norm(h, {kC}, Tensor(), Tensor(), eps);
  return add(mul(normed, add(scale.reshape({kB, 1, kC}), 1.0)), shift.reshape({kB, 1, kC}));
}

// The block formulas of transformer_block.hpp, one sublayer at a time, from the block's own
// attention, FFN and norm modules.
Tensor hand_block(nn::TransformerBlock& b, const Tensor& x, const nn::BlockContext& ctx) {
  const auto& c = b.config;
  auto SA = [&](const Tensor& h) { return b.attn->forward(h, ctx.key_padding_mask); };
  auto CA = [&](const Tensor& h) { return b.cross_attn->forward_cross(h, ctx.memory, ctx.memory_padding_mask); };
  auto FFN = [&](const Tensor& h) { return b.ffn->forward(h); };
  std::vector<std::function<Tensor(const Tensor&)>> sublayers{SA};
  std::vector<std::shared_ptr<nn::Residual>> residuals{b.attn_residual};
  if (c.cross_attention) {
    sublayers.push_back(CA);
    residuals.push_back(b.cross_residual);
  }
  sublayers.push_back(FFN);
  residuals.push_back(b.ffn_residual);

  if (c.norm == NormKind::adaln_zero) {  // h = h + gate ⊙ F(modulate(LN(h), shift, scale)) per sublayer
    const Tensor m = linear(silu(ctx.cond), b.modulation->weight, b.modulation->bias);  // (B, 3·n·C)
    auto part = [&](std::int64_t i) { return narrow(m, 1, i * kC, kC); };
    Tensor h = x;
    for (std::size_t s = 0; s < sublayers.size(); ++s) {
      const std::int64_t k = 3 * static_cast<std::int64_t>(s);
      const Tensor update = sublayers[s](hand_modulate(h, part(k), part(k + 1), c.norm_eps));
      h = add(h, mul(update, part(k + 2).reshape({kB, 1, kC})));
    }
    return h;
  }
  auto N = [&](std::size_t s, const Tensor& h) { return nn::apply_norm(*residuals[s]->norm, h, ctx.cond); };
  const double a = c.residual_scale;
  Tensor h = x;
  for (std::size_t s = 0; s < sublayers.size(); ++s) {
    const bool last = s + 1 == sublayers.size();
    switch (c.placement) {
      case Placement::pre: h = add(mul(h, a), sublayers[s](N(s, h))); break;            // α·h + F(N(h))
      case Placement::post:
      case Placement::deepnorm: h = N(s, add(mul(h, a), sublayers[s](h))); break;      // N(α·h + F(h))
      case Placement::b2t:                                                               // N(h + F(h) (+ x))
        h = N(s, last ? add(add(h, sublayers[s](h)), x) : add(h, sublayers[s](h)));
        break;
      case Placement::rezero: h = add(h, mul(sublayers[s](h), residuals[s]->scale)); break;  // h + a·F(h)
      case Placement::none: h = N(s, sublayers[s](h)); break;                                // N(F(h))
    }
  }
  return h;
}

}  // namespace

TEST_CASE("Residual forms equal their formulas", "[residual]") {
  manual_seed(1);
  const Tensor x = param({kB, kT, kC}, 2), skip = param({kB, kT, kC}, 3), cond = param({kB, kCond}, 4);
  auto lin = std::make_shared<nn::Linear>(nn::LinearOptions(kC, kC).dtype(f64));
  const nn::Sublayer F = [&](const Tensor& h) { return lin->forward(h); };
  auto ln = std::make_shared<nn::LayerNorm>(nn::NormOptions(kC).dtype(f64));
  randomize_parameters_(*ln, 5);

  SECTION("post: y = N(α·x + F(x) + skip)") {
    nn::Residual r(Form::post, ln, 0.7);
    CHECK_CLOSE(r.forward(x, F), ln->forward(add(mul(x, 0.7), lin->forward(x))), 1e-14);
    CHECK_CLOSE(r.forward(x, F, Tensor(), skip), ln->forward(add(add(mul(x, 0.7), lin->forward(x)), skip)), 1e-14);
    CHECK_GRADCHECK([&](L in) { return r.forward(in[0], F, Tensor(), in[1]); },
                    with_parameters(with_parameters({x, skip}, *lin), r));
    // with an AdaLN the condition reaches the norm
    auto ada = std::make_shared<nn::AdaLN>(nn::AdaLNOptions(kC, kCond).dtype(f64));
    nn::Residual ra(Form::post, ada);
    CHECK_CLOSE(ra.forward(x, F, cond), ada->forward(add(x, lin->forward(x)), cond), 1e-14);
    CHECK_GRADCHECK([&](L in) { return ra.forward(in[0], F, in[1]); }, with_parameters({x, cond}, ra));
  }
  SECTION("pre: y = α·x + F(N(x))") {
    auto rms = std::make_shared<nn::RMSNorm>(nn::NormOptions(kC).dtype(f64));
    randomize_parameters_(*rms, 6);
    nn::Residual r(Form::pre, rms, 1.3);
    CHECK_CLOSE(r.forward(x, F), add(mul(x, 1.3), lin->forward(rms->forward(x))), 1e-14);
    nn::Residual unit(Form::pre, ln);
    CHECK_CLOSE(unit.forward(x, F), add(x, lin->forward(ln->forward(x))), 1e-14);
    CHECK_GRADCHECK([&](L in) { return r.forward(in[0], F); }, with_parameters(with_parameters({x}, *lin), r));
  }
  SECTION("rezero: y = x + a·F(x), a = 0 at init") {
    nn::Residual r(Form::rezero, nullptr, 1.0, f64);
    REQUIRE(r.scale.defined());
    CHECK(r.scale.dim() == 0);
    CHECK(r.scale.requires_grad());
    CHECK(r.named_parameters()[0].first == "scale");
    CHECK_CLOSE(r.forward(x, F), x, 0.0);  // exactly the identity
    r.scale.fill_(0.3);
    CHECK_CLOSE(r.forward(x, F), add(x, mul(lin->forward(x), 0.3)), 1e-14);
    CHECK_GRADCHECK([&](L in) { return r.forward(in[0], F); }, with_parameters(with_parameters({x}, *lin), r));
  }
  SECTION("none: y = N(F(x)), or F(x) without a norm") {
    nn::Residual with_norm(Form::none, ln);
    CHECK_CLOSE(with_norm.forward(x, F), ln->forward(lin->forward(x)), 1e-14);
    nn::Residual bare(Form::none, nullptr);
    CHECK(bare.parameters().empty());
    CHECK_CLOSE(bare.forward(x, F), lin->forward(x), 0.0);
    CHECK_GRADCHECK([&](L in) { return with_norm.forward(in[0], F); },
                    with_parameters(with_parameters({x}, *lin), with_norm));
  }
  SECTION("misuse") {
    REQUIRE_THROWS_AS(nn::Residual(Form::post, nullptr), ValueError);
    REQUIRE_THROWS_WITH(nn::Residual(Form::pre, nullptr), Contains("Residual: post and pre placements need a norm"));
    REQUIRE_THROWS_WITH(nn::Residual(Form::rezero, ln), Contains("Residual: rezero has no norm"));
    // only LayerNorm, RMSNorm and AdaLN are norms, not any module with one input
    REQUIRE_THROWS_AS(nn::apply_norm(*lin, x, Tensor()), ValueError);
    REQUIRE_THROWS_WITH(nn::apply_norm(*lin, x, Tensor()), Contains("apply_norm: Linear is not a norm"));
    nn::MultiHeadAttention attn(nn::MultiHeadAttentionOptions(kC, 2).dtype(f64));
    REQUIRE_THROWS_WITH(nn::apply_norm(attn, x, Tensor()), Contains("apply_norm: MultiHeadAttention is not a norm"));
  }
}

TEST_CASE("Every block placement × norm equals its formula and passes gradcheck", "[residual][block]") {
  struct Combo {
    Placement placement;
    NormKind norm;
    bool cross;
  };
  std::vector<Combo> combos;
  for (Placement p : {Placement::post, Placement::pre, Placement::b2t, Placement::deepnorm, Placement::none})
    for (NormKind n : {NormKind::layernorm, NormKind::rmsnorm, NormKind::adaln}) combos.push_back({p, n, false});
  combos.push_back({Placement::pre, NormKind::adaln_zero, false});
  combos.push_back({Placement::rezero, NormKind::layernorm, false});  // no norm at all
  for (Placement p : {Placement::pre, Placement::post, Placement::b2t})
    combos.push_back({p, NormKind::layernorm, true});
  combos.push_back({Placement::pre, NormKind::adaln_zero, true});
  combos.push_back({Placement::b2t, NormKind::adaln, true});

  std::uint64_t seed = 100;
  for (const Combo& combo : combos) {
    INFO(describe(combo.placement, combo.norm, combo.cross));
    manual_seed(seed);
    nn::TransformerBlock block(block_config(combo.placement, combo.norm, combo.cross));
    // away from the special init values: zero gates and ReZero scales, unit norm gains
    randomize_parameters_(block, seed, 0.5);
    const bool ada = combo.norm == NormKind::adaln || combo.norm == NormKind::adaln_zero;
    TensorList inputs;
    inputs.reserve(3);
    inputs.push_back(param({kB, kT, kC}, seed + 1));
    if (ada) inputs.push_back(param({kB, kCond}, seed + 2));
    if (combo.cross) inputs.push_back(param({kB, kTk, kC}, seed + 3));
    const std::size_t cond_at = 1, memory_at = ada ? 2 : 1;
    auto context = [&](L in) {
      nn::BlockContext ctx;
      ctx.key_padding_mask = pad_last_of_row1(kT);
      if (ada) ctx.cond = in[cond_at];
      if (combo.cross) {
        ctx.memory = in[memory_at];
        ctx.memory_padding_mask = pad_last_of_row1(kTk);
      }
      return ctx;
    };
    const Tensor y = block.forward(inputs[0], context(inputs));
    CHECK(y.shape() == Shape{kB, kT, kC});
    CHECK_CLOSE(y, hand_block(block, inputs[0], context(inputs)), 1e-13);
    CHECK_GRADCHECK([&](L in) { return block.forward(in[0], context(in)); }, with_parameters(inputs, block));
    seed += 10;
  }
}

TEST_CASE("B2T block: h = N1(x + Attn(x)), y = N2(h + FFN(h) + x)", "[residual][block][b2t]") {
  manual_seed(7);
  nn::TransformerBlockConfig c = block_config(Placement::b2t, NormKind::layernorm, false);
  c.residual_scale = 2.0;  // ignored by b2t: its residual sums are plain
  nn::TransformerBlock block(c);
  randomize_parameters_(block, 8, 0.5);
  auto* n1 = dynamic_cast<nn::LayerNorm*>(block.attn_residual->norm.get());
  auto* n2 = dynamic_cast<nn::LayerNorm*>(block.ffn_residual->norm.get());
  REQUIRE(n1);
  REQUIRE(n2);
  CHECK(block.attn_residual->alpha == 1.0);
  CHECK(block.ffn_residual->alpha == 1.0);
  const Tensor x = param({kB, kT, kC}, 9);
  const Tensor h = n1->forward(add(x, block.attn->forward(x)));
  const Tensor expected = n2->forward(add(add(h, block.ffn->forward(h)), x));
  CHECK_CLOSE(block.forward(x), expected, 1e-13);
  // and it differs from plain Post-LN, which lacks the "+ x"
  CHECK(max_abs_diff(block.forward(x), n2->forward(add(h, block.ffn->forward(h)))) > 1e-3);
}

TEST_CASE("AdaLN-Zero blocks are exactly the identity at init", "[residual][block][adaln]") {
  for (bool cross : {false, true}) {
    INFO("cross " << cross);
    manual_seed(11);
    nn::TransformerBlock block(block_config(Placement::pre, NormKind::adaln_zero, cross));
    REQUIRE(block.modulation);
    CHECK(block.modulation->weight.shape() == Shape{(cross ? 9 : 6) * kC, kCond});
    CHECK(block.attn_residual == nullptr);
    CHECK((block.norm3 != nullptr) == cross);
    nn::BlockContext ctx;
    ctx.cond = param({kB, kCond}, 12);
    ctx.memory = param({kB, kTk, kC}, 13);
    const Tensor x = param({kB, kT, kC}, 14);
    CHECK_CLOSE(block.forward(x, ctx), x, 0.0);
    // the gates open once the modulation moves
    randomize_parameters_(*block.modulation, 15);
    CHECK(max_abs_diff(block.forward(x, ctx), x) > 1e-3);
  }
}

TEST_CASE("ReZero and none blocks have the documented parameters", "[residual][block]") {
  nn::TransformerBlock rezero(block_config(Placement::rezero, NormKind::layernorm, false));
  std::vector<std::string> names;
  for (const auto& [n, _] : rezero.named_parameters())
    if (n.find("residual") != std::string::npos) names.push_back(n);
  CHECK(names == std::vector<std::string>{"attn_residual.scale", "ffn_residual.scale"});
  const Tensor x = param({kB, kT, kC}, 16);
  CHECK_CLOSE(rezero.forward(x), x, 0.0);  // both scales start at 0
  nn::TransformerBlock none(block_config(Placement::none, NormKind::rmsnorm, false));
  CHECK(none.attn_residual->norm != nullptr);
  CHECK(none.ffn_residual->form == Form::none);
}

TEST_CASE("Only pre stacks end with a final norm", "[residual][final_norm]") {
  auto has_prefix = [](const nn::Module& m, const std::string& prefix) {
    std::int64_t n = 0;
    for (const auto& [name, _] : m.named_parameters()) n += name.rfind(prefix, 0) == 0;
    return n;
  };
  for (Placement p : {Placement::pre, Placement::post, Placement::b2t, Placement::deepnorm, Placement::rezero,
                      Placement::none}) {
    INFO(nn::placement_name(p));
    nn::TransformerLMConfig c;
    c.vocab_size = 10;
    c.max_seq_len = 4;
    c.n_layers = 2;
    c.block = block_config(p, NormKind::layernorm, false);
    c.block.dtype = DType::float32;
    nn::TransformerLM lm(c);
    std::int64_t final_modules = 0;
    for (auto& [name, m] : lm.named_modules()) final_modules += name.rfind("final_norm", 0) == 0;
    if (p == Placement::pre) {
      REQUIRE(lm.final_norm != nullptr);
      CHECK(lm.final_norm->type_name() == "LayerNorm");
      CHECK(final_modules == 1);
      CHECK(has_prefix(lm, "final_norm") == 2);  // weight and bias
    } else {
      CHECK(lm.final_norm == nullptr);
      CHECK(final_modules == 0);
      CHECK(has_prefix(lm, "final_norm") == 0);
    }
    if (p == Placement::rezero) continue;  // Seq2Seq is checked on the norm placements
    nn::Seq2SeqConfig s;
    s.n_encoder_layers = 2;
    s.n_decoder_layers = 1;
    s.max_seq_len = 4;
    s.block = c.block;
    nn::Seq2SeqTransformer model(s);
    const bool pre = p == Placement::pre;
    CHECK((model.encoder_norm != nullptr) == pre);
    CHECK((model.decoder_norm != nullptr) == pre);
    CHECK(has_prefix(model, "encoder_norm") == (pre ? 2 : 0));
    CHECK(has_prefix(model, "decoder_norm") == (pre ? 2 : 0));
  }
  // an RMSNorm pre stack ends with one RMSNorm (a weight only)
  nn::TransformerLMConfig c;
  c.n_layers = 1;
  c.block = block_config(Placement::pre, NormKind::rmsnorm, false);
  nn::TransformerLM lm(c);
  REQUIRE(lm.final_norm != nullptr);
  CHECK(lm.final_norm->type_name() == "RMSNorm");
  CHECK(has_prefix(lm, "final_norm") == 1);
}

TEST_CASE("Block configurations are validated with clear messages", "[residual][block][errors]") {
  REQUIRE_THROWS_AS(nn::TransformerBlock(block_config(Placement::post, NormKind::adaln_zero, false)), ValueError);
  REQUIRE_THROWS_WITH(nn::TransformerBlock(block_config(Placement::post, NormKind::adaln_zero, false)),
                      Contains("adaln_zero is a pre-norm design (DiT); placement must be pre, got post"));
  nn::TransformerBlockConfig c = block_config(Placement::pre, NormKind::adaln, false);
  c.cond_dim = 0;
  REQUIRE_THROWS_WITH(nn::TransformerBlock(c), Contains("TransformerBlockConfig: norm adaln needs cond_dim > 0"));
  c = block_config(Placement::pre, NormKind::layernorm, false);
  c.n_heads = 3;
  REQUIRE_THROWS_WITH(nn::TransformerBlock(c), Contains("d_model (4) must be a positive multiple of n_heads (3)"));
  c.n_heads = 2;
  c.dropout = 1.0;
  REQUIRE_THROWS_WITH(nn::TransformerBlock(c), Contains("dropout must be in [0, 1)"));

  nn::TransformerBlock decoder(block_config(Placement::pre, NormKind::layernorm, true));
  REQUIRE_THROWS_WITH(decoder.forward(ones({kB, kT, kC}, f64)), Contains("cross-attention needs ctx.memory"));
  REQUIRE_THROWS_AS(decoder.forward(ones({kB, kC}, f64)), ShapeError);
  REQUIRE_THROWS_WITH(decoder.forward(ones({kB, kT, 5}, f64)),
                      Contains("TransformerBlock: input must be (B, T, d_model = 4), got [2, 3, 5]"));
  nn::TransformerBlock dit(block_config(Placement::pre, NormKind::adaln_zero, false));
  REQUIRE_THROWS_WITH(dit.forward(ones({kB, kT, kC}, f64)),
                      Contains("TransformerBlock: adaln_zero needs ctx.cond of shape (B, 3), got none"));
  nn::TransformerBlock ada(block_config(Placement::post, NormKind::adaln, false));
  REQUIRE_THROWS_WITH(ada.forward(ones({kB, kT, kC}, f64)),
                      Contains("AdaLN: cond must be (B, cond_dim = 3), got none"));

  for (Placement p : {Placement::post, Placement::pre, Placement::b2t, Placement::deepnorm, Placement::rezero,
                      Placement::none})
    CHECK(nn::placement_from_name(nn::placement_name(p)) == p);
  for (NormKind n : {NormKind::layernorm, NormKind::rmsnorm, NormKind::adaln, NormKind::adaln_zero})
    CHECK(nn::norm_kind_from_name(nn::norm_kind_name(n)) == n);
  REQUIRE_THROWS_WITH(nn::placement_from_name("sandwich"), Contains("unknown placement 'sandwich'"));
  REQUIRE_THROWS_WITH(nn::norm_kind_from_name("batchnorm"), Contains("unknown norm 'batchnorm'"));
}
