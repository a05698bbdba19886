// test_pointwise_norm.cpp — DyT and Derf (nn/pointwise_norm.hpp): their outputs against the
// formulas computed element by element, their gradients against the derivatives written out
// in pointwise_norm.cpp; float64 gradcheck and gradgradcheck of each module; their parameters
// at init; the registry entries; the α at init of each norm of a model by its role (config
// norm_alpha0_*), refused by the norms without α; whole LMs with each norm through a float64
// gradcheck; and the errors.
#include <cmath>
#include <numbers>
#include <string>
#include <vector>

#include "nn/nn_helpers.hpp"
#include "nn/lm_gradcheck.hpp"
#include "support/gradcheck_catch.hpp"

using namespace tapegrad;
using namespace tapegrad::testing;  // param, randomize_parameters_, with_parameters, tiny_lm, ...
using Catch::Contains;
using nn::NormKind;

namespace {

constexpr DType f64 = DType::float64;
constexpr std::int64_t kC = 3;

// A DyT or Derf of kC channels in float64 with every parameter away from its init.
std::shared_ptr<nn::Norm> random_norm(const NormKind& kind, std::uint64_t seed) {
  nn::NormSpec spec;
  spec.dim = kC;
  spec.dtype = f64;
  auto n = nn::make_norm(kind, spec);
  randomize_parameters_(*n, seed, 0.7);
  return n;
}

// The parameter of m called name (a dotted name of named_parameters()).
Tensor param_of(const nn::Module& m, const std::string& name) {
  for (const auto& [key, t] : m.named_parameters())
    if (key == name) return t;
  FAIL("no parameter " << name);
  return Tensor();
}

double value_of(const nn::Module& m, const std::string& name) { return param_of(m, name).to_vector().at(0); }

}  // namespace

TEST_CASE("DyT and Derf equal their formulas, element by element, and so do their gradients", "[norm][dyt]") {
  for (const NormKind& kind : {NormKind::dyt, NormKind::derf}) {
    INFO(kind.name);
    auto n = random_norm(kind, 10);
    const bool derf = kind == NormKind::derf;
    const double a = value_of(*n, "alpha"), s = derf ? value_of(*n, "shift") : 0.0;
    const std::vector<double> g = param_of(*n, "weight").to_vector(), b = param_of(*n, "bias").to_vector();
    const Tensor x = param({2, 2, kC}, 11, 2.0), dy = param({2, 2, kC}, 12);
    const Tensor y = n->forward(x);
    y.backward(dy);
    // f(u) and f'(u): tanh(α·x) and α(1 − t²), or erf(α·x + s) and α·2/√π·exp(−u²)
    const std::vector<double> xs = x.to_vector(), dys = dy.to_vector(), ys = y.to_vector(), dxs = x.grad().to_vector();
    std::vector<double> want_dg(kC, 0.0), want_db(kC, 0.0);
    double want_da = 0, want_ds = 0;
    for (std::size_t i = 0; i < xs.size(); ++i) {
      const std::size_t c = i % kC;
      const double u = a * xs[i] + s;
      const double f = derf ? std::erf(u) : std::tanh(u);
      const double slope = derf ? 2 * std::numbers::inv_sqrtpi * std::exp(-u * u) : 1 - f * f;  // f'(u)
      CHECK(ys[i] == Approx(g[c] * f + b[c]).epsilon(1e-14));
      CHECK(dxs[i] == Approx(dys[i] * g[c] * slope * a).epsilon(1e-14));
      want_da += dys[i] * g[c] * slope * xs[i];
      want_ds += dys[i] * g[c] * slope;
      want_dg[c] += dys[i] * f;
      want_db[c] += dys[i];
    }
    CHECK(param_of(*n, "alpha").grad().to_vector().at(0) == Approx(want_da).epsilon(1e-13));
    if (derf) CHECK(param_of(*n, "shift").grad().to_vector().at(0) == Approx(want_ds).epsilon(1e-13));
    const Tensor dg = param_of(*n, "weight").grad(), db = param_of(*n, "bias").grad();
    for (std::int64_t c = 0; c < kC; ++c) {
      CHECK(dg.to_vector()[c] == Approx(want_dg[c]).epsilon(1e-13));
      CHECK(db.to_vector()[c] == Approx(want_db[c]).epsilon(1e-13));
    }
  }
}

TEST_CASE("DyT and Derf pass a float64 gradcheck and gradgradcheck", "[norm][dyt][gradcheck]") {
  for (const NormKind& kind : {NormKind::dyt, NormKind::derf}) {
    INFO(kind.name);
    auto n = random_norm(kind, 20);
    const Tensor x = param({2, 3, kC}, 21, 1.5);
    const GradcheckFn fn = [&](const TensorList& in) { return n->forward(in[0]); };
    CHECK_GRADCHECK(fn, with_parameters({x}, *n));
    CHECK_GRADGRADCHECK(fn, with_parameters({x}, *n));
  }
}

TEST_CASE("DyT and Derf start as their papers' code: α = alpha0, s = 0, g = 1, b = 0", "[norm][dyt]") {
  nn::DyT dyt(4);
  CHECK(dyt.alpha.to_vector() == std::vector<double>{0.5});
  CHECK(dyt.weight.to_vector() == std::vector<double>(4, 1.0));
  CHECK(dyt.bias.to_vector() == std::vector<double>(4, 0.0));
  std::vector<std::string> names;  // the reference code's names, in the order of its ViT file
  for (const auto& [name, t] : nn::Derf(2).named_parameters()) names.push_back(name);
  CHECK(names == std::vector<std::string>{"alpha", "weight", "bias", "shift"});
  CHECK(dyt.named_parameters().size() == 3);
  nn::Derf derf(nn::PointwiseNormOptions(4).alpha0(0.8).shift0(0.25).dtype(f64));
  CHECK(derf.alpha.to_vector() == std::vector<double>{0.8});
  CHECK(derf.shift.to_vector() == std::vector<double>{0.25});
  CHECK(derf.weight.dtype() == f64);
  CHECK(derf.extra_repr() == "dim=4, alpha0=0.8, shift0=0.25");
  // the registry builds them with the spec's alpha0, a final norm too
  nn::NormSpec spec;
  spec.dim = 4;
  spec.role = nn::NormRole::final;
  spec.alpha0 = 0.2;
  for (const NormKind& kind : {NormKind::dyt, NormKind::derf}) {
    CHECK(nn::norm_info(kind).learned_alpha);
    CHECK(value_of(*nn::make_final_norm(kind, spec), "alpha") == Approx(0.2));
  }
  CHECK_FALSE(nn::norm_info(NormKind::layernorm).learned_alpha);
  CHECK(nn::norm_names() == "layernorm, rmsnorm, adaln, adaln_zero, dyt or derf");
  CHECK_THAT(nn::norm_info(NormKind::dyt).formula, Contains("tanh(α·x)") && Contains("arXiv 2503.10622"));
  CHECK_THAT(nn::norm_info(NormKind::derf).formula, Contains("erf(α·x + s)") && Contains("arXiv 2512.10938"));
}

TEST_CASE("each norm of a model starts its α at the config's value for its role", "[norm][dyt]") {
  for (const NormKind& kind : {NormKind::dyt, NormKind::derf}) {
    INFO(kind.name);
    nn::TransformerLMConfig c = tiny_lm();
    c.block.norm = kind;
    c.block.dtype = f64;  // 0.8 exactly
    c.block.norm_alpha0_attn = 0.8;
    c.block.norm_alpha0_ffn = 0.2;
    c.block.norm_alpha0_final = 0.3;
    const nn::TransformerLM lm(c);
    for (int l = 0; l < 2; ++l) {
      const std::string b = "blocks." + std::to_string(l) + ".";
      CHECK(value_of(lm, b + "attn_residual.norm.alpha") == 0.8);
      CHECK(value_of(lm, b + "ffn_residual.norm.alpha") == 0.2);
    }
    CHECK(value_of(lm, "final_norm.alpha") == 0.3);
    // seq2seq: cross-attention's norms are attention norms; both stacks end with a final norm
    nn::Seq2SeqConfig s = tiny_seq2seq(1, 1);
    s.block.norm = kind;
    s.block.dtype = f64;
    s.block.norm_alpha0_attn = 0.8;
    s.block.norm_alpha0_ffn = 0.2;
    s.block.norm_alpha0_final = 0.3;
    const nn::Seq2SeqTransformer s2s(s);
    CHECK(value_of(s2s, "decoder.0.cross_residual.norm.alpha") == 0.8);
    CHECK(value_of(s2s, "encoder.0.ffn_residual.norm.alpha") == 0.2);
    CHECK(value_of(s2s, "encoder_norm.alpha") == 0.3);
    CHECK(value_of(s2s, "decoder_norm.alpha") == 0.3);
  }
  // the defaults: 1.0 everywhere (DyT's Table 12 at width 1024 and below)
  nn::TransformerLMConfig c = tiny_lm();
  c.block.norm = NormKind::dyt;
  const nn::TransformerLM lm(c);
  CHECK(value_of(lm, "blocks.0.attn_residual.norm.alpha") == 1.0);
  CHECK(value_of(lm, "final_norm.alpha") == 1.0);
  CHECK(c.block.norm_spec(nn::NormRole::ffn).alpha0 == 1.0);
  CHECK(nn::norm_role_name(nn::NormRole::cross) == "cross");
}

TEST_CASE("norm_alpha0_* are refused by name by the norms without α, and must be positive", "[norm][dyt][errors]") {
  nn::TransformerLMConfig c = tiny_lm();
  c.block.norm_alpha0_ffn = 0.5;
  REQUIRE_THROWS_AS(c.validate(), ValueError);
  REQUIRE_THROWS_WITH(c.validate(), Contains("TransformerBlockConfig: norm_alpha0_ffn = 0.5 does not apply to norm "
                                             "layernorm (only dyt and derf have a learned α); leave it at 1"));
  c.block.norm = NormKind::rmsnorm;
  c.block.norm_alpha0_ffn = 1.0;
  c.block.norm_alpha0_final = 2.0;
  REQUIRE_THROWS_WITH(nn::TransformerLM(c), Contains("norm_alpha0_final = 2 does not apply to norm rmsnorm"));
  c.block.norm = NormKind::derf;
  CHECK_NOTHROW(c.validate());
  for (double bad : {0.0, -0.5, std::nan(""), double(INFINITY)}) {
    c.block.norm_alpha0_attn = bad;
    REQUIRE_THROWS_WITH(c.validate(), Contains("TransformerBlockConfig: norm_alpha0_attn (α at init of dyt and derf) "
                                               "must be positive and finite"));
  }
  // the modules check their own settings and inputs
  REQUIRE_THROWS_WITH(nn::DyT(0), Contains("DyT: dim must be positive, got 0"));
  REQUIRE_THROWS_WITH(nn::DyT(nn::PointwiseNormOptions(4).alpha0(-1)), Contains("DyT: alpha0") && Contains("got -1"));
  REQUIRE_THROWS_WITH(nn::Derf(nn::PointwiseNormOptions(4).shift0(NAN)), Contains("Derf: shift0 (s at init) must be finite"));
  REQUIRE_THROWS_WITH(nn::DyT(nn::PointwiseNormOptions(4).shift0(0.5)),
                      Contains("DyT: shift0 applies to Derf only (DyT has no shift); leave it at 0"));
  nn::Derf derf(4);
  REQUIRE_THROWS_AS(derf.forward(zeros({2, 3})), ShapeError);
  REQUIRE_THROWS_WITH(derf.forward(zeros({2, 3})), Contains("Derf: input must be (..., dim = 4), got [2, 3]"));
  REQUIRE_THROWS_WITH(nn::DyT(4).forward(zeros({4, 1})), Contains("DyT: input must be (..., dim = 4), got [4, 1]"));
}

TEST_CASE("TransformerLMs with DyT and Derf pass a float64 gradcheck, Pre-LN and Post-LN", "[norm][dyt][gradcheck]") {
  for (const NormKind& kind : {NormKind::dyt, NormKind::derf})
    for (const nn::Placement& placement : {nn::Placement::pre, nn::Placement::post}) {
      INFO(kind.name << " / " << placement.name);
      nn::TransformerLMConfig c;
      c.vocab_size = 5;
      c.max_seq_len = 3;
      c.n_layers = 2;
      c.block = {.d_model = 4, .n_heads = 2, .d_ff = 8, .norm = kind, .placement = placement, .dtype = f64};
      c.block.norm_alpha0_attn = 0.8;  // each role its own α0
      c.block.norm_alpha0_ffn = 0.4;
      manual_seed(900);
      nn::TransformerLM lm(c);
      randomize_parameters_(lm, 901, 0.5);
      CHECK_LM_GRADCHECK(lm, 902);
    }
}
