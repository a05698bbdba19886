// test_model_config.cpp — self-describing model files (io/model_config.hpp): every config
// field survives a file (a config with every field changed from its default comes back equal,
// so a field missing from visit_fields fails here); a file alone rebuilds each placement, norm,
// conditional and seq2seq model with the same outputs; loading leaves the default generator
// alone; train_lm's older checkpoints still load; what cannot be read is refused, by name.
#include <cmath>

#include "io/io_helpers.hpp"
#include "nn/nn_helpers.hpp"

using namespace tapegrad;
using Catch::Contains;
using tapegrad::testing::max_abs_diff;
using tapegrad::testing::ScratchDir;
using tapegrad::testing::kLibraryPlacements;

namespace {

// Every field away from its default.
nn::TransformerLMConfig unusual_lm() {
  nn::TransformerLMConfig c;
  c.vocab_size = 13;
  c.max_seq_len = 7;
  c.n_layers = 3;
  c.block.d_model = 12;
  c.block.n_heads = 3;
  c.block.d_ff = 20;
  c.block.activation = nn::Activation::swiglu;
  c.block.norm = nn::NormKind::adaln;
  c.block.placement = nn::Placement::post;
  c.block.residual_scale = 0.7071067811865476;
  c.block.dropout = 0.125;
  c.block.attn_dropout = 0.0625;
  c.block.causal = true;
  c.block.cross_attention = true;  // the LM ignores both (its blocks are causal, without cross-attention)
  c.block.norm_eps = 1e-6;
  c.block.bias = false;
  c.block.cond_dim = 5;
  c.block.dtype = DType::float64;
  c.tie_weights = false;
  c.init = nn::InitScheme::xavier;
  c.b2t_scaling = true;
  c.n_classes = 4;
  return c;
}

nn::Seq2SeqConfig unusual_seq2seq() {
  nn::Seq2SeqConfig c;
  c.src_vocab_size = 9;
  c.tgt_vocab_size = 11;
  c.max_seq_len = 6;
  c.n_encoder_layers = 2;
  c.n_decoder_layers = 1;
  c.block.d_model = 8;
  c.block.n_heads = 2;
  c.block.placement = nn::Placement::deepnorm;
  c.block.norm = nn::NormKind::rmsnorm;
  c.block.activation = nn::Activation::relu;
  c.tie_target_weights = false;
  c.init = nn::InitScheme::pytorch;
  c.b2t_scaling = false;
  return c;
}

io::Checkpoint with_config(const io::Metadata& m) {
  io::Checkpoint c;
  c.metadata = m;
  return c;
}

void set(io::Checkpoint& c, const std::string& key, io::MetaValue v) { c.set(key, std::move(v)); }

}  // namespace

TEST_CASE("model config: every field round-trips through metadata", "[io][model_config]") {
  const nn::TransformerLMConfig lm = unusual_lm();
  const io::Checkpoint ck = with_config(io::config_metadata(lm));
  CHECK(io::model_kind(ck) == "TransformerLM");
  CHECK(ck.get_int("config.version") == io::kModelConfigVersion);
  CHECK(ck.get_string("config.block.placement") == "post");
  CHECK(ck.get_string("config.b2t_scaling") == "true");
  CHECK(ck.get_int("config.block.bias") == 0);
  CHECK(io::lm_config_from(ck) == lm);
  CHECK(!(io::lm_config_from(ck) == nn::TransformerLMConfig()));

  const nn::Seq2SeqConfig s = unusual_seq2seq();
  const io::Checkpoint ck2 = with_config(io::config_metadata(s));
  CHECK(io::model_kind(ck2) == "Seq2SeqTransformer");
  CHECK(io::seq2seq_config_from(ck2) == s);
  // an unset optional stays unset
  nn::TransformerLMConfig plain;
  CHECK(!io::lm_config_from(with_config(io::config_metadata(plain))).b2t_scaling.has_value());
  // every field is printed, in order, as the tools show it
  const auto fields = io::config_fields(lm);
  REQUIRE(fields.size() == io::config_metadata(lm).size() - 2);  // all but kind and version
  CHECK(fields.front() == std::pair<std::string, std::string>{"vocab_size", "13"});
  CHECK(std::find(fields.begin(), fields.end(), std::pair<std::string, std::string>{"block.residual_scale", "0.7071067811865476"}) !=
        fields.end());
}

TEST_CASE("model config: a file alone rebuilds every placement, norm and model kind", "[io][model_config]") {
  ScratchDir dir;
  const Tensor tokens = tensor({1, 2, 3, 0, 4, 5}, {2, 3}, DType::int64);
  const Tensor classes = tensor({0, 2}, {2}, DType::int64);
  int n = 0;
  for (const nn::PlacementInfo& p : kLibraryPlacements)
    for (const nn::NormInfo& norm : nn::norm_registry()) {
      nn::TransformerLMConfig c = tapegrad::testing::tiny_lm(8, 4, 2);
      c.block.placement = nn::Placement(p.name);
      c.block.norm = nn::NormKind(norm.name);
      if (norm.conditional) c.n_classes = 3;
      try {
        c.validate();
      } catch (const ValueError&) {
        continue;  // a combination the library refuses (AdaLN-Zero outside pre, norms with ReZero)
      }
      INFO(p.name << " / " << norm.name);
      manual_seed(40 + n);
      nn::TransformerLM model(c);
      tapegrad::testing::randomize_parameters_(model, 50 + n, 0.3);  // AdaLN-Zero's zeros too
      const std::string path = dir.file("m" + std::to_string(n++) + ".tgc");
      io::save_model(model, path);
      const auto rebuilt = io::load_model<nn::TransformerLM>(path);
      CHECK(rebuilt->config == c);
      const Tensor cls = norm.conditional ? classes : Tensor();
      CHECK_CLOSE(rebuilt->forward(tokens, cls), model.forward(tokens, cls), 0.0);
    }
  CHECK(n >= 15);
  // a seq2seq model, in the JSON format too
  for (io::Format format : {io::Format::binary, io::Format::json}) {
    manual_seed(60);
    nn::Seq2SeqTransformer s2s(tapegrad::testing::tiny_seq2seq(2, 1, nn::Placement::b2t));
    const std::string path = dir.file(format == io::Format::json ? "s2s.json" : "s2s.tgc");
    io::save_model(s2s, path, format);
    const auto rebuilt = io::load_model<nn::Seq2SeqTransformer>(path);
    CHECK(rebuilt->config == s2s.config);
    const Tensor src = tensor({1, 2, 3, 4}, {2, 2}, DType::int64), tgt = tensor({5, 6, 7, 8}, {2, 2}, DType::int64);
    CHECK_CLOSE(rebuilt->forward(src, tgt), s2s.forward(src, tgt), 0.0);
  }
}

TEST_CASE("model config: loading leaves the default generator where it was", "[io][model_config]") {
  ScratchDir dir;
  nn::TransformerLM model(tapegrad::testing::tiny_lm());
  io::save_model(model, dir.file("m.tgc"));
  manual_seed(9);
  const double expected = [] {
    Generator g(0);
    g.set_state(default_generator().get_state());
    return g.next_double();
  }();
  (void)io::load_model<nn::TransformerLM>(dir.file("m.tgc"));
  CHECK(default_generator().next_double() == expected);
}

TEST_CASE("model config: train_lm's checkpoints from before stored configs still load", "[io][model_config]") {
  const std::string path = TAPEGRAD_SOURCE_DIR "/tests/io/data/legacy_train_lm.tgc";
  const io::Checkpoint ck = io::load_checkpoint(path);
  CHECK(io::model_kind(ck) == "TransformerLM");
  const nn::TransformerLMConfig c = io::lm_config_from(ck, path);
  CHECK(c.n_layers == 1);
  CHECK(c.block.d_model == 8);
  CHECK(c.block.placement == nn::Placement::post);
  CHECK(c.block.norm == nn::NormKind::rmsnorm);
  CHECK(c.block.activation == nn::Activation::gelu_tanh);
  CHECK(c.max_seq_len == 8);
  const auto model = io::load_model<nn::TransformerLM>(path);
  const Tensor logits = model->forward(tensor({1, 2, 3}, {1, 3}, DType::int64));
  CHECK(logits.shape() == Shape{1, 3, c.vocab_size});
  // the weights are the file's: the first row of the token embedding as saved
  const io::StateDict saved = io::load(path);
  CHECK_CLOSE(model->tok_emb->weight, saved.at("tok_emb.weight"), 0.0);
}

TEST_CASE("model config: what cannot be read is refused, saying why and what to do", "[io][model_config]") {
  ScratchDir dir;
  nn::TransformerLM model(tapegrad::testing::tiny_lm());
  io::save_module(model, dir.file("weights.tgc"));  // weights only
  REQUIRE_THROWS_AS(io::load_model<nn::TransformerLM>(dir.file("weights.tgc")), io::FormatError);
  REQUIRE_THROWS_WITH(io::load_model<nn::TransformerLM>(dir.file("weights.tgc")),
                      Contains("weights.tgc holds no model configuration") && Contains("io::load_module(model,"));
  io::save_model(model, dir.file("lm.tgc"));
  REQUIRE_THROWS_WITH(io::load_model<nn::Seq2SeqTransformer>(dir.file("lm.tgc")),
                      Contains("lm.tgc holds a TransformerLM, not a Seq2SeqTransformer"));

  const io::Metadata good = io::config_metadata(tapegrad::testing::tiny_lm());
  io::Checkpoint c = with_config(good);
  set(c, "config.version", io::kModelConfigVersion + 1);
  REQUIRE_THROWS_WITH(io::lm_config_from(c, "f.tgc"),
                      Contains("f.tgc: model config version " + std::to_string(io::kModelConfigVersion + 1) +
                               " (this build of tapegrad reads 1.." + std::to_string(io::kModelConfigVersion)));
  c = with_config(good);
  set(c, "config.block.rope_scaling", 8.0);
  REQUIRE_THROWS_WITH(io::lm_config_from(c, "f.tgc"), Contains("config.block.rope_scaling is not a setting of TransformerLM"));
  c = with_config(good);
  set(c, "config.block.placement", std::string("sandwich"));
  REQUIRE_THROWS_WITH(io::lm_config_from(c, "f.tgc"), Contains("f.tgc: model config entry config.block.placement holds a name this "
                                                                "build does not know: unknown placement 'sandwich'"));
  c = with_config(good);
  set(c, "config.n_layers", 2.5);
  REQUIRE_THROWS_WITH(io::lm_config_from(c, "f.tgc"), Contains("config.n_layers is not an integer"));
  c = with_config(good);
  set(c, "config.tie_weights", std::int64_t{7});
  REQUIRE_THROWS_WITH(io::lm_config_from(c, "f.tgc"), Contains("config.tie_weights must be 0 or 1, got 7"));
  c = with_config(good);
  set(c, "config.block.residual_scale", 2.0);  // each entry readable, the whole invalid: b2t has no α
  set(c, "config.block.placement", std::string("b2t"));
  REQUIRE_THROWS_WITH(io::lm_config_from(c, "f.tgc"),
                      Contains("f.tgc: the stored model configuration is invalid: TransformerBlockConfig: residual_scale = 2"));
  io::Metadata missing = good;
  missing.erase(missing.begin() + 5);
  REQUIRE_THROWS_WITH(io::lm_config_from(with_config(missing), "f.tgc"), Contains("is missing"));
}

TEST_CASE("model config: a config larger than the weights beside it is refused before anything is built", "[io][model_config]") {
  nn::TransformerLM model(tapegrad::testing::tiny_lm(8, 8, 2));
  io::Checkpoint ck;
  ck.metadata = io::config_metadata(model.config);
  ck.section("model") = io::state_dict(model);
  CHECK(io::model_from<nn::TransformerLM>(ck, "f.tgc")->config == model.config);
  auto refused = [&](const std::string& key, io::MetaValue v) {
    io::Checkpoint bad = ck;
    bad.set(key, std::move(v));
    REQUIRE_THROWS_AS(io::model_from<nn::TransformerLM>(bad, "f.tgc"), io::FormatError);
    try {
      (void)io::model_from<nn::TransformerLM>(bad, "f.tgc");
    } catch (const io::FormatError& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  CHECK_THAT(refused("config.vocab_size", std::int64_t{1} << 40),
             Contains("makes tok_emb.weight [1099511627776, 16], the file holds [8, 16]"));
  CHECK_THAT(refused("config.n_layers", std::int64_t{1000000}), Contains("has 1000000 blocks in blocks, the file holds 2"));
  CHECK_THAT(refused("config.block.d_ff", std::int64_t{1} << 30), Contains("blocks.0.ffn.fc1.weight"));
  CHECK_THAT(refused("config.tie_weights", std::int64_t{0}),
             Contains("the weights do not fit the stored model configuration: load_state_dict"));
}

TEST_CASE("model config: a version-1 file loads with the defaults of the fields added since", "[io][model_config]") {
  // Version 2 added block.n_kv_heads, qk_norm, rope, rope_theta, rope_interleaved: a file
  // written before has none of them and rebuilds with their defaults (what it was built with).
  const nn::TransformerLMConfig tiny = tapegrad::testing::tiny_lm();
  io::Metadata v1;
  for (const auto& [key, value] : io::config_metadata(tiny)) {
    const bool newer = key == "config.block.n_kv_heads" || key == "config.block.qk_norm" || key == "config.block.rope" ||
                       key == "config.block.rope_theta" || key == "config.block.rope_interleaved";
    if (key == "config.version") v1.emplace_back(key, std::int64_t{1});
    else if (!newer) v1.emplace_back(key, value);
  }
  CHECK(io::lm_config_from(with_config(v1), "v1.tgc") == tiny);
  // In a version-2 file the same entries are required.
  io::Metadata v2_missing;
  for (const auto& [key, value] : io::config_metadata(tiny))
    if (key != "config.block.rope") v2_missing.emplace_back(key, value);
  REQUIRE_THROWS_WITH(io::lm_config_from(with_config(v2_missing), "v2.tgc"), Contains("config.block.rope is missing"));
}

TEST_CASE("model config: grouped-query attention, QK-norm and rotary positions round-trip", "[io][model_config]") {
  ScratchDir dir;
  nn::TransformerLMConfig c = tapegrad::testing::tiny_lm();
  c.block.n_heads = 4;
  c.block.n_kv_heads = 2;
  c.block.qk_norm = nn::QkNorm::rmsnorm;
  c.block.rope = true;
  c.block.rope_theta = 500000.0;
  c.block.rope_interleaved = true;
  nn::TransformerLM model(c);
  CHECK_FALSE(model.pos_emb);  // rotary positions: no table
  io::save_model(model, dir.file("gqa.tgc"));
  const auto loaded = io::load_model<nn::TransformerLM>(dir.file("gqa.tgc"));
  CHECK(loaded->config == c);
  const Tensor tokens = tensor({1, 2, 3, 4, 5, 6}, {1, 6}, DType::int64);
  CHECK(max_abs_diff(loaded->forward(tokens), model.forward(tokens)) == 0);
}

TEST_CASE("model config: the point-wise norms' α at init round-trips, and older files load with the defaults", "[io][model_config]") {
  ScratchDir dir;
  nn::TransformerLMConfig c = tapegrad::testing::tiny_lm();
  c.block.norm = nn::NormKind::derf;
  c.block.norm_alpha0_attn = 0.8;
  c.block.norm_alpha0_ffn = 0.2;
  c.block.norm_alpha0_final = 0.15;
  nn::TransformerLM model(c);
  io::save_model(model, dir.file("derf.tgc"));
  const auto loaded = io::load_model<nn::TransformerLM>(dir.file("derf.tgc"));
  CHECK(loaded->config == c);
  const Tensor tokens = tensor({1, 2, 3, 4, 5, 6}, {1, 6}, DType::int64);
  CHECK(max_abs_diff(loaded->forward(tokens), model.forward(tokens)) == 0);
  // Version 3 added block.norm_alpha0_attn, _ffn, _final: a version-2 file (a DyT model, or any
  // other) has none of them and rebuilds with their defaults, 1.
  for (const nn::NormKind& norm : {nn::NormKind::dyt, nn::NormKind::layernorm}) {
    nn::TransformerLMConfig plain = tapegrad::testing::tiny_lm();
    plain.block.norm = norm;
    io::Metadata v2;
    for (const auto& [key, value] : io::config_metadata(plain)) {
      if (key == "config.version") v2.emplace_back(key, std::int64_t{2});
      else if (key.find("norm_alpha0") == std::string::npos) v2.emplace_back(key, value);
    }
    REQUIRE(v2.size() == io::config_metadata(plain).size() - 3);
    CHECK(io::lm_config_from(with_config(v2), "v2.tgc") == plain);
  }
  // In a version-3 file they are required.
  io::Metadata v3_missing;
  for (const auto& [key, value] : io::config_metadata(c))
    if (key != "config.block.norm_alpha0_ffn") v3_missing.emplace_back(key, value);
  REQUIRE_THROWS_WITH(io::lm_config_from(with_config(v3_missing), "v3.tgc"),
                      Contains("config.block.norm_alpha0_ffn is missing"));
  // and a stored value that the stored norm does not use is refused as invalid, by name
  io::Checkpoint bad = with_config(io::config_metadata(tapegrad::testing::tiny_lm()));
  set(bad, "config.block.norm_alpha0_attn", 0.5);
  REQUIRE_THROWS_WITH(io::lm_config_from(bad, "bad.tgc"),
                      Contains("bad.tgc: the stored model configuration is invalid") &&
                          Contains("norm_alpha0_attn = 0.5 does not apply to norm layernorm"));
}

TEST_CASE("model config: the depth parametrization round-trips, and version-3 files load without it or an embedding scale", "[io][model_config][depth_mup]") {
  ScratchDir dir;
  nn::TransformerLMConfig c = tapegrad::testing::tiny_lm();
  c.block.branch_depth_exponent = 0.5;
  c.block.branch_base_depth = 1;
  nn::TransformerLM model(c);
  io::save_model(model, dir.file("mup.tgc"));
  const auto loaded = io::load_model<nn::TransformerLM>(dir.file("mup.tgc"));
  CHECK(loaded->config == c);
  const Tensor tokens = tensor({1, 2, 3, 4, 5, 6}, {1, 6}, DType::int64);
  CHECK(max_abs_diff(loaded->forward(tokens), model.forward(tokens)) == 0);
  // Version 4 added block.branch_depth_exponent, branch_base_depth, embed_scale and
  // embed_scale_learnable: a version-3 file has none and rebuilds with m = 1 and s = 1, the
  // model it was trained as.
  const nn::TransformerLMConfig standard = tapegrad::testing::tiny_lm();
  io::Metadata v3;
  for (const auto& [key, value] : io::config_metadata(standard)) {
    if (key == "config.version") v3.emplace_back(key, std::int64_t{3});
    else if (key.find("branch_") == std::string::npos && key.find("embed_scale") == std::string::npos)
      v3.emplace_back(key, value);
  }
  REQUIRE(v3.size() == io::config_metadata(standard).size() - 4);
  CHECK(io::lm_config_from(with_config(v3), "v3.tgc") == standard);
  // in a version-4 file they are required
  io::Metadata v4_missing;
  for (const auto& [key, value] : io::config_metadata(c))
    if (key != "config.block.branch_base_depth") v4_missing.emplace_back(key, value);
  REQUIRE_THROWS_WITH(io::lm_config_from(with_config(v4_missing), "v4.tgc"),
                      Contains("config.block.branch_base_depth is missing"));
}
