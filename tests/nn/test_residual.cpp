// test_residual.cpp — norm placements (nn/placement/) and the norms they call (nn/norm.hpp):
// each placement's formula unit against its formula written naively, on sublayers made of
// Linear layers; every TransformerBlock placement × norm against the block formulas computed
// by hand from the block's own submodules, and a float64 gradcheck over input, condition,
// memory and all parameters; every registered placement builds an LM and a seq2seq model that
// pass a gradcheck; AdaLN-Zero blocks start as the identity; the final-norm rule of
// TransformerLM and Seq2SeqTransformer; configuration errors, by name.
#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "nn/nn_helpers.hpp"
#include "nn/lm_gradcheck.hpp"
#include "support/gradcheck_catch.hpp"

using namespace tapegrad;
using Catch::Contains;
using nn::NormKind;
using nn::Placement;
using tapegrad::testing::max_abs_diff;
using tapegrad::testing::param;
using tapegrad::testing::randomize_parameters_;
using tapegrad::testing::tiny_seq2seq;
using tapegrad::testing::with_parameters;
using tapegrad::testing::kLibraryPlacements;
using tapegrad::testing::close_block_gates_;

namespace {

constexpr DType f64 = DType::float64;
using L = const TensorList&;
using Fn = std::function<Tensor(const Tensor&)>;

constexpr std::int64_t kB = 2, kT = 3, kC = 4, kCond = 3, kTk = 4;

// (B, T) int64, 1 = padded: row 1 pads its last position.
Tensor pad_last_of_row1(std::int64_t T) {
  std::vector<double> m(kB * T, 0.0);
  m[2 * T - 1] = 1;
  return tensor(m, {kB, T}, DType::int64);
}

nn::TransformerBlockConfig block_config(const Placement& placement, const NormKind& norm, bool cross) {
  nn::TransformerBlockConfig c;
  c.d_model = kC;
  c.n_heads = 2;
  c.d_ff = 8;
  c.placement = placement;
  c.norm = norm;
  c.causal = true;
  c.cross_attention = cross;
  c.dtype = f64;
  if (nn::norm_info(norm).conditional) c.cond_dim = kCond;
  // α ≠ 1 wherever it applies, but for AdaLN-Zero blocks, which start as the identity only with α = 1
  if (nn::placement_info(placement).residual_scale && norm != NormKind::adaln_zero) c.residual_scale = 1.5;
  // Mix-LN: one Post-LN block in every stack of 2 or 3 (⌊0.5·L⌋ = 1)
  if (nn::placement_info(placement).mix_ln_ratio) c.mix_ln_ratio = 0.5;
  return tapegrad::testing::fit_for_placement(c);  // nGPT: SwiGLU, no biases, rotary positions
}

std::string describe(const Placement& p, const NormKind& n, bool cross) {
  return p.name + " / " + n.name + (cross ? " / cross-attention" : "");
}

// LN(h)·(1 + scale) + shift without affine, scale and shift (B, C) broadcast over T.
Tensor hand_modulate(const Tensor& h, const Tensor& shift, const Tensor& scale, double eps) {
  const Tensor normed = layer_norm(h, {kC}, Tensor(), Tensor(), eps);
  return add(mul(normed, add(scale.reshape({kB, 1, kC}), 1.0)), shift.reshape({kB, 1, kC}));
}

// One sublayer step of each placement's formula, written naively: h is the stream, F the
// sublayer, N its norm, a its ReZero gate, α its residual scale, N_out its output norm, l the
// block's place 1..L in its stack and post_ln_blocks Mix-LN's ⌊ρL⌋, eigen_lr nGPT's α; x the
// block input, last whether F is the block's last sublayer.
struct Step {
  Fn F, N;
  Tensor a;
  double alpha;
  Fn N_out;
  std::int64_t l = 1, post_ln_blocks = 0;
  Tensor beta;  // the block's gate (GPAS)
  Tensor eigen_lr;
};

// nGPT's Norm(v) = v / ‖v‖ and its α = |0.05·√C·s̃| (s_init 1/√C), written out.
Tensor unit(const Tensor& v) { return div(v, sqrt(sum(mul(v, v), {-1}, true))); }
Tensor eigen_lr_of(const nn::Residual& r) {
  return r.eigen_lr.defined() ? abs(mul(r.eigen_lr, 0.05 * std::sqrt(double(kC)))) : Tensor();
}
using HandFormula = std::function<Tensor(const Tensor& h, const Step& s, const Tensor& x, bool last)>;
const std::map<std::string, HandFormula>& hand_formulas() {
  static const std::map<std::string, HandFormula> formulas = {
      {"post", [](const Tensor& h, const Step& s, const Tensor&, bool) { return s.N(add(mul(h, s.alpha), s.F(h))); }},
      {"deepnorm", [](const Tensor& h, const Step& s, const Tensor&, bool) { return s.N(add(mul(h, s.alpha), s.F(h))); }},
      {"pre", [](const Tensor& h, const Step& s, const Tensor&, bool) { return add(mul(h, s.alpha), s.F(s.N(h))); }},
      {"b2t",
       [](const Tensor& h, const Step& s, const Tensor& x, bool last) {  // N(h + F(h) (+ x))
         return s.N(last ? add(add(h, s.F(h)), x) : add(h, s.F(h)));
       }},
      {"rezero", [](const Tensor& h, const Step& s, const Tensor&, bool) { return add(h, mul(s.F(h), s.a)); }},
      {"none", [](const Tensor& h, const Step& s, const Tensor&, bool) { return s.N(s.F(h)); }},
      {"peri", [](const Tensor& h, const Step& s, const Tensor&, bool) { return add(h, s.N_out(s.F(s.N(h)))); }},
      {"olmo2", [](const Tensor& h, const Step& s, const Tensor&, bool) { return add(h, s.N(s.F(h))); }},
      {"mixln",
       [](const Tensor& h, const Step& s, const Tensor&, bool) {  // post in blocks l <= ⌊ρL⌋, else pre
         return s.l <= s.post_ln_blocks ? s.N(add(h, s.F(h))) : add(h, s.F(s.N(h)));
       }},
      {"lns",
       [](const Tensor& h, const Step& s, const Tensor&, bool) {
         return add(h, s.F(mul(s.N(h), 1.0 / std::sqrt(double(s.l)))));
       }},
      {"gpas",
       [](const Tensor& h, const Step& s, const Tensor&, bool) {  // u − SiLU(β)·sg(u), u the Pre-LN add
         const Tensor u = add(h, s.F(s.N(h)));
         return sub(u, mul(mul(s.beta, sigmoid(s.beta)), u.detach()));
       }},
      {"ngpt",
       [](const Tensor& h, const Step& s, const Tensor&, bool) {  // Norm(ĥ + α ⊙ (Norm(F(h)) − ĥ)), ĥ = Norm(h)
         const Tensor h_hat = unit(h);
         return unit(add(h_hat, mul(s.eigen_lr, sub(unit(s.F(h)), h_hat))));
       }},
  };
  return formulas;
}

// The block formulas, one sublayer at a time, from the block's own attention, FFN and norm modules.
Tensor hand_block(nn::TransformerBlock& b, const Tensor& x, const nn::BlockContext& ctx) {
  const auto& c = b.config;
  std::vector<Fn> sublayers{[&](const Tensor& h) { return b.attn->forward(h, ctx.key_padding_mask); }};
  std::vector<std::shared_ptr<nn::Residual>> residuals{b.attn_residual};
  if (c.cross_attention) {
    sublayers.push_back([&](const Tensor& h) { return b.cross_attn->forward_cross(h, ctx.memory, ctx.memory_padding_mask); });
    residuals.push_back(b.cross_residual);
  }
  sublayers.push_back([&](const Tensor& h) { return b.ffn->forward(h); });
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
  const HandFormula& formula = hand_formulas().at(c.placement.name);
  Tensor h = x;
  for (std::size_t s = 0; s < sublayers.size(); ++s) {
    const auto& r = residuals[s];
    const Step step{sublayers[s],
                    [&](const Tensor& v) { return r->norm->forward(v, ctx.cond); },
                    r->scale,
                    r->alpha,
                    [&](const Tensor& v) { return r->norm_out->forward(v, ctx.cond); },
                    b.stack.index + 1,
                    static_cast<std::int64_t>(std::floor(c.mix_ln_ratio * double(b.stack.layers()))),
                    b.gate,
                    eigen_lr_of(*r)};
    h = formula(h, step, x, s + 1 == sublayers.size());
  }
  return h;
}

}  // namespace

TEST_CASE("Every registered placement has a naive formula here, a paper and a one-line formula", "[residual][registry]") {
  REQUIRE(kLibraryPlacements.size() >= 6);
  for (const nn::PlacementInfo& p : kLibraryPlacements) {
    INFO(p.name);
    CHECK(hand_formulas().count(p.name) == 1);  // a new placement is tested against its formula written out
    CHECK(!p.label.empty());
    CHECK(!p.paper.empty());
    CHECK(p.formula.find('=') != std::string::npos);
    CHECK(p.formula.find('\n') == std::string::npos);
    CHECK(p.make != nullptr);
    CHECK(nn::placement_from_name(p.name) == Placement(p.name));
    CHECK(nn::placement_help().find("  " + p.name + " ") != std::string::npos);
    CHECK(nn::placement_help().find(p.formula) != std::string::npos);
  }
}

TEST_CASE("Placement formulas equal their formulas on Linear sublayers, with any norm and alpha", "[residual]") {
  manual_seed(1);
  const Tensor x = param({kB, kT, kC}, 2), cond = param({kB, kCond}, 4);
  auto lin1 = std::make_shared<nn::Linear>(nn::LinearOptions(kC, kC).dtype(f64));
  auto lin2 = std::make_shared<nn::Linear>(nn::LinearOptions(kC, kC).dtype(f64));
  const Fn F1 = [&](const Tensor& h) { return lin1->forward(h); }, F2 = [&](const Tensor& h) { return lin2->forward(h); };
  std::vector<std::pair<std::string, std::function<std::shared_ptr<nn::Norm>()>>> norms = {
      {"layernorm", [] { return std::make_shared<nn::LayerNorm>(nn::NormOptions(kC).dtype(f64)); }},
      {"rmsnorm", [] { return std::make_shared<nn::RMSNorm>(nn::NormOptions(kC).dtype(f64)); }},
      {"adaln", [] { return std::make_shared<nn::AdaLN>(nn::AdaLNOptions(kC, kCond).dtype(f64)); }},
  };
  // Blocks 1 and 4 of a stack of 4: Mix-LN's ρ = 0.25 makes block 1 Post-LN and block 4 Pre-LN,
  // LayerNorm Scaling divides by √1 and √4.
  const nn::Stack stack = nn::Stack::decoder_only(4);
  const nn::TransformerBlockConfig config;
  std::uint64_t seed = 20;
  for (const nn::PlacementInfo& p : kLibraryPlacements)
    for (const auto& [norm_name, make_norm] : norms)
      for (const std::int64_t index : {0, 3}) {
        if (!p.norms && norm_name != "layernorm") continue;
        INFO(p.name << " with " << norm_name << " in block " << index + 1 << " of 4");
        const double alpha = p.residual_scale || p.depth_alpha ? 0.7 : 1.0;
        auto residual = [&] {
          return std::make_shared<nn::Residual>(p.norms ? make_norm() : nullptr, alpha, p.rezero_gates, f64,
                                                p.output_norms ? make_norm() : nullptr, p.hypersphere ? kC : 0);
        };
        auto r1 = residual(), r2 = residual();
        randomize_parameters_(*r1, seed, 0.5);  // away from unit gains and zero gates
        randomize_parameters_(*r2, seed + 5, 0.5);
        seed += 10;
        const Tensor beta = p.block_gate ? param({}, seed) : Tensor();  // GPAS's β, away from 0
        const auto formula = p.make(config, stack.at(index));
        auto run = [&](const Tensor& input, const Tensor& c, const Tensor& b) {
          nn::BlockSublayers F;
          F.attn = nn::Sublayer(F1, *r1, c);
          F.ffn = nn::Sublayer(F2, *r2, c);
          F.gate = b;
          return formula->forward(input, F);
        };
        auto step = [&](const nn::Residual& r, const Fn& F, const Tensor& c) {
          return Step{F,       [&r, c](const Tensor& v) { return r.norm->forward(v, c); },
                      r.scale, r.alpha,
                      [&r, c](const Tensor& v) { return r.norm_out->forward(v, c); },
                      index + 1, /*post_ln_blocks=*/1, beta, eigen_lr_of(r)};
        };
        const HandFormula& hand = hand_formulas().at(p.name);
        const Tensor h = hand(x, step(*r1, F1, cond), x, false);
        CHECK_CLOSE(run(x, cond, beta), hand(h, step(*r2, F2, cond), x, true), 1e-14);
        TensorList inputs = with_parameters(with_parameters(with_parameters({x, cond}, *lin1), *lin2), *r1);
        inputs = with_parameters(inputs, *r2);
        // GPAS: gradcheck where its stop-gradient is inert, β = 0 (nn_helpers.hpp's close_block_gates_ says why)
        if (beta.defined()) inputs.push_back(zeros({}, f64).requires_grad_());
        CHECK_GRADCHECK([&](L in) { return run(in[0], in[1], beta.defined() ? in.back() : Tensor()); }, inputs);
      }
}

TEST_CASE("Residual holds a sublayer's norm, alpha and ReZero gate under PyTorch-style names", "[residual]") {
  auto ln = std::make_shared<nn::LayerNorm>(nn::NormOptions(kC).dtype(f64));
  nn::Residual with_norm(ln, 0.5);
  CHECK(with_norm.norm == ln);
  CHECK(with_norm.alpha == 0.5);
  CHECK(!with_norm.scale.defined());
  CHECK(with_norm.named_parameters()[0].first == "norm.weight");
  nn::Residual gate(nullptr, 1.0, true, f64);
  REQUIRE(gate.scale.defined());
  CHECK(gate.scale.dim() == 0);
  CHECK(gate.scale.requires_grad());
  CHECK(gate.scale.item() == 0);
  CHECK(gate.named_parameters().size() == 1);
  CHECK(gate.named_parameters()[0].first == "scale");
  nn::Residual bare(nullptr);
  CHECK(bare.parameters().empty());
  // a formula that asks for a piece its residual lacks is told which
  nn::BlockSublayers F;
  const Fn identity = [](const Tensor& h) { return h; };
  F.attn = nn::Sublayer(identity, bare, Tensor());
  REQUIRE_THROWS_WITH(F.attn.N(ones({kB, kT, kC}, f64)), Contains("has no norm"));
  REQUIRE_THROWS_WITH(F.attn.a(), Contains("has no ReZero gate"));
  REQUIRE_THROWS_WITH(F.attn.eigen_lr(), Contains("has no eigen learning rates"));
  CHECK(!F.cross);
  CHECK(static_cast<bool>(F.attn));
}

TEST_CASE("Norms share one interface: forward(x, cond) and gate(update, cond)", "[residual][norm]") {
  manual_seed(2);
  const Tensor x = param({kB, kT, kC}, 3), cond = param({kB, kCond}, 4), update = param({kB, kT, kC}, 5);
  auto ln = std::make_shared<nn::LayerNorm>(nn::NormOptions(kC).dtype(f64));
  auto rms = std::make_shared<nn::RMSNorm>(nn::NormOptions(kC).dtype(f64));
  randomize_parameters_(*ln, 6);
  randomize_parameters_(*rms, 7);
  // the unconditional norms ignore the condition; their gate passes the update through
  for (nn::Norm* n : {static_cast<nn::Norm*>(ln.get()), static_cast<nn::Norm*>(rms.get())}) {
    INFO(n->type_name());
    CHECK_CLOSE(n->forward(x, cond), n->forward(x), 0.0);
    CHECK_CLOSE((*n)(x, cond), n->forward(x), 0.0);
    CHECK(n->gate(update, cond).is_same(update));
  }
  CHECK_CLOSE(ln->forward(x), layer_norm(x, {kC}, ln->weight, ln->bias, 1e-5), 1e-15);
  // AdaLN needs the condition, and says so
  nn::AdaLN ada(nn::AdaLNOptions(kC, kCond).dtype(f64));
  REQUIRE_THROWS_WITH(ada.forward(x), Contains("AdaLN: cond must be (B, cond_dim = 3), got none"));
  CHECK(ada.gate(update, cond).is_same(update));
  // AdaLNZero: N(x) = LN(x)·(1 + scale) + shift and gate ⊙ F, from m = [shift, scale, gate]
  nn::AdaLNZero zero(kC, 1e-5);
  CHECK(zero.parameters().empty());
  const Tensor m = param({kB, 3 * kC}, 8);
  const Tensor shift = narrow(m, 1, 0, kC), scale = narrow(m, 1, kC, kC), g = narrow(m, 1, 2 * kC, kC);
  CHECK_CLOSE(zero.forward(x, m), hand_modulate(x, shift, scale, 1e-5), 1e-14);
  CHECK_CLOSE(zero.gate(update, m), mul(update, g.reshape({kB, 1, kC})), 0.0);
  CHECK_GRADCHECK([&](L in) { return zero.gate(zero.forward(in[0], in[1]), in[1]); }, TensorList{x, m});
  REQUIRE_THROWS_AS(zero.forward(x, cond), ShapeError);
  REQUIRE_THROWS_WITH(zero.forward(x, cond), Contains("AdaLNZero: x [2, 3, 4] needs its block's modulation"));
  REQUIRE_THROWS_WITH(zero.forward(x), Contains("got none"));
}

TEST_CASE("Every block placement × norm equals its formula and passes gradcheck", "[residual][block]") {
  struct Combo {
    Placement placement;
    NormKind norm;
    bool cross;
  };
  std::vector<Combo> combos;
  for (const Placement& p : {Placement::post, Placement::pre, Placement::b2t, Placement::deepnorm, Placement::none})
    for (const NormKind& n : {NormKind::layernorm, NormKind::rmsnorm, NormKind::adaln}) combos.push_back({p, n, false});
  combos.push_back({Placement::pre, NormKind::adaln_zero, false});
  combos.push_back({Placement::rezero, NormKind::layernorm, false});  // no norm at all
  combos.push_back({Placement::ngpt, NormKind::layernorm, false});    // none either, and Norm(v) = v/‖v‖
  for (const Placement& p : {Placement::pre, Placement::post, Placement::b2t, Placement::rezero})
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
    const bool ada = nn::norm_info(combo.norm).conditional;
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
  nn::TransformerBlock block(block_config(Placement::b2t, NormKind::layernorm, false));
  randomize_parameters_(block, 8, 0.5);
  auto& n1 = *block.attn_residual->norm;
  auto& n2 = *block.ffn_residual->norm;
  CHECK(n1.type_name() == "LayerNorm");
  CHECK(block.attn_residual->alpha == 1.0);  // B2T's residual sums are plain
  CHECK(block.ffn_residual->alpha == 1.0);
  const Tensor x = param({kB, kT, kC}, 9);
  const Tensor h = n1(add(x, block.attn->forward(x)));
  const Tensor expected = n2(add(add(h, block.ffn->forward(h)), x));
  CHECK_CLOSE(block.forward(x), expected, 1e-13);
  // and it differs from plain Post-LN, which lacks the "+ x"
  CHECK(max_abs_diff(block.forward(x), n2(add(h, block.ffn->forward(h)))) > 1e-3);
}

TEST_CASE("AdaLN-Zero blocks are exactly the identity at init", "[residual][block][adaln]") {
  for (bool cross : {false, true}) {
    INFO("cross " << cross);
    manual_seed(11);
    nn::TransformerBlock block(block_config(Placement::pre, NormKind::adaln_zero, cross));
    REQUIRE(block.modulation);
    CHECK(block.modulation->weight.shape() == Shape{(cross ? 9 : 6) * kC, kCond});
    CHECK(block.attn_residual->norm->type_name() == "AdaLNZero");
    CHECK((block.cross_residual != nullptr) == cross);
    // the block's only parameters besides attention and FFN are the modulation's
    for (const auto& [name, _] : block.named_parameters())
      CHECK((name.rfind("attn.", 0) == 0 || name.rfind("cross_attn.", 0) == 0 || name.rfind("ffn.", 0) == 0 ||
             name.rfind("modulation.", 0) == 0));
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
  CHECK(none.ffn_residual->norm->type_name() == "RMSNorm");
  CHECK(none.placement().name == "none");
}

TEST_CASE("Every registered placement builds an LM and a seq2seq model that pass a float64 gradcheck", "[residual][registry]") {
  for (const nn::PlacementInfo& p : kLibraryPlacements) {
    INFO(p.name);
    manual_seed(30);
    nn::TransformerLMConfig c;
    c.vocab_size = 5;
    c.max_seq_len = 3;
    c.n_layers = 2;
    c.block = block_config(Placement(p.name), NormKind::layernorm, false);
    nn::TransformerLM lm(c);
    randomize_parameters_(lm, 31, 0.5);
    close_block_gates_(lm);
    CHECK_LM_GRADCHECK(lm, 32);

    if (!tapegrad::testing::supports_seq2seq(p)) continue;  // nGPT: decoder-only
    nn::Seq2SeqConfig s = tiny_seq2seq(1, 1, Placement(p.name));
    s.block = block_config(Placement(p.name), NormKind::layernorm, false);
    s.max_seq_len = 3;
    nn::Seq2SeqTransformer model(s);
    randomize_parameters_(model, 33, 0.5);
    close_block_gates_(model);
    CHECK(model.decoder->at<nn::TransformerBlock>(0)->cross_residual != nullptr);
    const Tensor src = tensor({1, 2, 3, 4, 5, 6}, {2, 3}, DType::int64), tgt = tensor({1, 2, 3, 4}, {2, 2}, DType::int64);
    const Tensor w = param({2, 2, 12}, 34);
    CHECK_GRADCHECK([&](L) { return sum(mul(model.forward(src, tgt), w)); }, with_parameters({}, model));
  }
}

TEST_CASE("A stack ends with a final norm exactly when its placement asks for one", "[residual][final_norm]") {
  auto has_prefix = [](const nn::Module& m, const std::string& prefix) {
    std::int64_t n = 0;
    for (const auto& [name, _] : m.named_parameters()) n += name.rfind(prefix, 0) == 0;
    return n;
  };
  CHECK(nn::placement_info(Placement::pre).final_norm);
  for (const nn::PlacementInfo& info : kLibraryPlacements) {
    const Placement p(info.name);
    INFO(p.name);
    // the placements whose stream leaves the last block unnormalized
    const std::vector<Placement> with_final_norm = {Placement::pre, Placement::peri, Placement::olmo2, Placement::mixln,
                                                    Placement::lns, Placement::gpas};
    CHECK(info.final_norm == (std::find(with_final_norm.begin(), with_final_norm.end(), p) != with_final_norm.end()));
    nn::TransformerLMConfig c;
    c.vocab_size = 10;
    c.max_seq_len = 4;
    c.n_layers = 2;
    c.block = block_config(p, NormKind::layernorm, false);
    c.block.dtype = DType::float32;
    nn::TransformerLM lm(c);
    std::int64_t final_modules = 0;
    for (auto& [name, m] : lm.named_modules()) final_modules += name.rfind("final_norm", 0) == 0;
    if (info.final_norm) {
      REQUIRE(lm.final_norm != nullptr);
      CHECK(lm.final_norm->type_name() == "LayerNorm");
      CHECK(final_modules == 1);
      CHECK(has_prefix(lm, "final_norm") == 2);  // weight and bias
    } else {
      CHECK(lm.final_norm == nullptr);
      CHECK(final_modules == 0);
      CHECK(has_prefix(lm, "final_norm") == 0);
    }
    if (!tapegrad::testing::supports_seq2seq(info)) continue;  // nGPT: decoder-only
    nn::Seq2SeqConfig s;
    s.n_encoder_layers = 2;
    s.n_decoder_layers = 1;
    s.max_seq_len = 4;
    s.block = c.block;
    nn::Seq2SeqTransformer model(s);
    CHECK((model.encoder_norm != nullptr) == info.final_norm);
    CHECK((model.decoder_norm != nullptr) == info.final_norm);
    CHECK(has_prefix(model, "encoder_norm") == (info.final_norm ? 2 : 0));
    CHECK(has_prefix(model, "decoder_norm") == (info.final_norm ? 2 : 0));
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

  // a setting that does not apply to the placement is refused by name, not ignored
  c = block_config(Placement::b2t, NormKind::layernorm, false);
  c.residual_scale = 2.0;
  REQUIRE_THROWS_WITH(nn::TransformerBlock(c), Contains("residual_scale = 2 does not apply to placement b2t "
                                                        "(only post and pre scale the residual); leave it at 1"));
  c.placement = Placement::deepnorm;
  REQUIRE_THROWS_WITH(nn::TransformerBlock(c), Contains("deepnorm sets α from the depth"));
  c.residual_scale = 1.0;
  c.placement = Placement::rezero;
  c.norm = NormKind::rmsnorm;
  REQUIRE_THROWS_WITH(nn::TransformerBlock(c), Contains("norm rmsnorm does not apply to placement rezero, which has no norms"));
  c.norm = NormKind("batchnorm");
  c.placement = Placement::pre;
  REQUIRE_THROWS_WITH(nn::TransformerBlock(c), Contains("unknown norm 'batchnorm' (expected layernorm, rmsnorm, adaln, adaln_zero, dyt or derf)"));
  c.norm = NormKind::layernorm;
  c.placement = Placement("sandwich");
  // the library's ten first (a program's own follow them, as docs/custom-block.md's test adds one)
  REQUIRE_THROWS_WITH(nn::TransformerBlock(c), Contains("unknown placement 'sandwich' (expected post, pre, b2t, deepnorm, rezero, none, peri, "
                                                        "olmo2, mixln") && Contains("lns"));

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

  for (const nn::PlacementInfo& p : kLibraryPlacements)
    CHECK(nn::placement_name(nn::placement_from_name(p.name)) == p.name);
  for (const nn::NormInfo& n : nn::norm_registry()) CHECK(nn::norm_kind_name(nn::norm_kind_from_name(n.name)) == n.name);
  REQUIRE_THROWS_WITH(nn::placement_from_name("sandwich"), Contains("unknown placement 'sandwich'"));
  REQUIRE_THROWS_WITH(nn::norm_kind_from_name("batchnorm"), Contains("unknown norm 'batchnorm'"));
}
