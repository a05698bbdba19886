// test_stream.cpp — the residual stream as an object (nn/stream/): the plain stream adds no
// parameter and no name; DenseFormer's depth-weighted averages and value residual's mixed
// values against their formulas written out with the blocks and plain ops; a float64 gradcheck
// of a whole small LM under each; generation on a KV cache equal to the whole forward; model
// files that keep the scheme (older ones loading as plain); the Hugging Face exports and
// activation checkpointing refusing what they cannot hold, by name; settings checked by name.
#include <algorithm>
#include <string>
#include <vector>

#include "io/io_helpers.hpp"
#include "nn/nn_helpers.hpp"
#include "nn/lm_cache_check.hpp"
#include "nn/lm_gradcheck.hpp"
#include "support/gradcheck_catch.hpp"

using namespace tapegrad;
using namespace tapegrad::testing;
using Catch::Contains;

namespace {

constexpr DType f64 = DType::float64;

nn::TransformerLMConfig lm_config(const std::string& scheme, std::int64_t layers = 3) {
  nn::TransformerLMConfig c = tiny_f64_lm(layers);
  c.stream.scheme = scheme;
  return c;
}

nn::TransformerBlock& block(nn::TransformerLM& lm, std::size_t l) {
  return static_cast<nn::TransformerBlock&>(*(*lm.blocks)[l]);
}

// The embedding and the head of an LM, written out: h0 = E[tokens] + P[0..T), logits of the
// final norm (when there is one) through the tied or untied head.
Tensor embed(nn::TransformerLM& lm, const Tensor& tokens) {
  return add(lm.tok_emb->forward(tokens), lm.pos_emb->forward(arange(tokens.size(1), DType::int64)));
}
Tensor head(nn::TransformerLM& lm, Tensor h) {
  if (lm.final_norm) h = lm.final_norm->forward(h);
  return lm.lm_head ? lm.lm_head->forward(h) : linear(h, lm.tok_emb->weight);
}

Tensor alphas(nn::TransformerLM& lm, std::size_t i) {
  return lm.stream->named_parameters().at(i).second;
}

}  // namespace

TEST_CASE("The plain stream is the model of before: no parameter, no state-dict name", "[stream]") {
  manual_seed(11);
  nn::TransformerLM lm(lm_config("plain"));
  CHECK(lm.stream->parameters().empty());
  for (const auto& [name, t] : io::state_dict(lm)) CHECK(name.rfind("stream.", 0) == std::string::npos);
  // the blocks one after the other, by hand
  const Tensor tokens = tensor({1, 2, 3, 4, 5, 6}, {2, 3}, DType::int64);
  Tensor h = embed(lm, tokens);
  for (std::size_t l = 0; l < 3; ++l) h = block(lm, l).forward(h);
  CHECK_CLOSE(lm.forward(tokens), head(lm, h), 0.0);
}

TEST_CASE("DenseFormer: after block l the stream is Σ_j α_{l,j}·X_j", "[stream][denseformer]") {
  const Tensor tokens = tensor({1, 2, 3, 4, 5, 6}, {2, 3}, DType::int64);
  SECTION("at init it is the plain model") {
    manual_seed(21);
    nn::TransformerLM dense(lm_config("denseformer"));
    manual_seed(21);
    nn::TransformerLM plain(lm_config("plain"));
    CHECK_CLOSE(dense.forward(tokens), plain.forward(tokens), 0.0);
    // one average per block, over X_0 .. X_l: 2, 3, 4 weights, the last 1
    const auto named = dense.stream->named_parameters();
    REQUIRE(named.size() == 3);
    CHECK(named[0].first == "alphas.0.weight");
    CHECK(named[2].second.to_vector() == std::vector<double>{0, 0, 0, 1});
    CHECK(io::state_dict(dense).contains("stream.alphas.1.weight"));
  }
  SECTION("with any α, written out") {
    for (auto [k, p] : {std::pair<std::int64_t, std::int64_t>{1, 1}, {2, 1}, {1, 2}, {2, 2}}) {
      INFO("dilation " << k << ", period " << p);
      nn::TransformerLMConfig c = lm_config("denseformer", 4);
      c.stream.dwa_dilation = k, c.stream.dwa_period = p;
      manual_seed(22);
      nn::TransformerLM lm(c);
      randomize_parameters_(*lm.stream, 23, 0.7);
      std::vector<Tensor> X = {embed(lm, tokens)};
      Tensor y = X[0];
      std::size_t average = 0;
      for (std::int64_t l = 1; l <= 4; ++l) {
        X.push_back(block(lm, static_cast<std::size_t>(l - 1)).forward(y));
        y = X.back();
        if (l % p != 0) continue;
        const std::vector<double> a = alphas(lm, average++).to_vector();
        REQUIRE(a.size() == static_cast<std::size_t>(l / k + 1));
        Tensor sum_j = zeros_like(y);
        for (std::int64_t j = l % k, w = 0; j <= l; j += k, ++w)
          sum_j = add(sum_j, mul(X[static_cast<std::size_t>(j)], a[static_cast<std::size_t>(w)]));
        y = sum_j;
      }
      CHECK(average == lm.stream->parameters().size());
      CHECK_CLOSE(lm.forward(tokens), head(lm, y), 1e-13);
    }
  }
}

TEST_CASE("Value residual: every attention after the first attends over λ1·V_1 + λ2·V_n", "[stream][value_residual]") {
  const Tensor tokens = tensor({1, 2, 3, 4, 5, 6}, {2, 3}, DType::int64);
  SECTION("λ1 = 0, λ2 = 1 is the plain model") {
    nn::TransformerLMConfig c = lm_config("value_residual");
    c.stream.value_lambda1 = 0.0, c.stream.value_lambda2 = 1.0;
    manual_seed(31);
    nn::TransformerLM mixed(c);
    manual_seed(31);
    nn::TransformerLM plain(lm_config("plain"));
    CHECK_CLOSE(mixed.forward(tokens), plain.forward(tokens), 0.0);
  }
  SECTION("the values each block attends over, written out") {
    nn::TransformerLMConfig c = lm_config("value_residual");
    c.stream.value_lambda1 = 0.3, c.stream.value_lambda2 = 0.9;
    manual_seed(32);
    nn::TransformerLM lm(c);
    randomize_parameters_(lm, 33, 0.5);
    // V of block l from its input, by hand: the v rows of its packed projection, after its norm
    const auto values_of = [&](std::size_t l, const Tensor& x) {
      nn::TransformerBlock& b = block(lm, l);
      const std::int64_t C = 8;
      const Tensor w = narrow(b.attn->qkv->weight, 0, 2 * C, C), bias = narrow(b.attn->qkv->bias, 0, 2 * C, C);
      return linear(b.attn_residual->norm->forward(x), w, bias);
    };
    std::vector<Tensor> seen;  // what each block's attention got and gave
    Tensor x = embed(lm, tokens), v1;
    for (std::size_t l = 0; l < 3; ++l) {
      const Tensor v = values_of(l, x);
      if (l == 0) v1 = v;
      nn::BlockContext ctx;
      ctx.values = [&](const Tensor& got) {
        CHECK_CLOSE(got, v, 1e-14);
        return l == 0 ? got : add(mul(v1, 0.3), mul(got, 0.9));
      };
      x = block(lm, l).forward(x, ctx);
    }
    CHECK_CLOSE(lm.forward(tokens), head(lm, x), 1e-13);
  }
  SECTION("learnable λ: one λ1 and one λ2 per block after the first, starting at the settings") {
    nn::TransformerLMConfig c = lm_config("value_residual");
    c.stream.value_lambda_learnable = true;
    nn::TransformerLM lm(c);
    const auto state = io::state_dict(lm);
    REQUIRE(state.contains("stream.lambda1"));
    CHECK(state.at("stream.lambda1").to_vector() == std::vector<double>{0.5, 0.5});
    CHECK(state.at("stream.lambda2").shape() == Shape{2});
  }
}

TEST_CASE("Each stream scheme's LM passes a float64 gradcheck", "[stream][gradcheck]") {
  for (const std::string scheme : {"plain", "denseformer", "value_residual"}) {
    INFO(scheme);
    nn::TransformerLMConfig c = lm_config(scheme);
    c.vocab_size = 5, c.max_seq_len = 3;
    if (scheme == "value_residual") c.stream.value_lambda_learnable = true;
    if (scheme == "denseformer") c.stream.dwa_dilation = 2;
    manual_seed(41);
    nn::TransformerLM lm(c);
    randomize_parameters_(lm, 42, 0.5);
    CHECK_LM_GRADCHECK(lm, 43);
  }
}

TEST_CASE("Generation on a KV cache under each scheme equals the whole forward", "[stream][generate]") {
  for (const std::string scheme : {"denseformer", "value_residual"}) {
    INFO(scheme);
    manual_seed(51);
    nn::TransformerLM lm(lm_config(scheme));
    randomize_parameters_(lm, 52, 0.5);
    lm.eval();
    CHECK_LM_CACHED_EQUALS_WHOLE(lm);
  }
}

TEST_CASE("Model files keep the stream, and files before it load with the plain stream", "[stream][io]") {
  ScratchDir dir;
  nn::TransformerLMConfig c = lm_config("denseformer", 4);
  c.stream.dwa_period = 2;
  manual_seed(61);
  nn::TransformerLM lm(c);
  randomize_parameters_(*lm.stream, 62, 0.5);
  const std::string path = dir.file("dense.tgc");
  io::save_model(lm, path);
  const io::Checkpoint ck = io::load_checkpoint(path);
  REQUIRE(ck.find("config.stream.scheme") != nullptr);
  CHECK(std::get<std::string>(*ck.find("config.stream.scheme")) == "denseformer");
  const auto rebuilt = io::load_model<nn::TransformerLM>(path);
  CHECK(rebuilt->config == c);
  const Tensor tokens = tensor({1, 2, 3, 0, 4, 5}, {2, 3}, DType::int64);
  CHECK_CLOSE(rebuilt->forward(tokens), lm.forward(tokens), 0.0);

  // version 2 had no stream: its models are plain
  nn::TransformerLMConfig plain = lm_config("plain");
  io::Checkpoint old;
  old.kind = "state_dict";
  for (const auto& entry : io::config_metadata(plain))
    if (entry.first.rfind("config.stream.", 0) != 0) old.metadata.push_back(entry);
  old.set("config.version", std::int64_t(2));
  nn::TransformerLM old_model(plain);
  old.section("model") = state_dict(old_model);
  CHECK(io::model_from<nn::TransformerLM>(old)->config == plain);
  // ... and a version-3 file without them is refused, naming the entry
  old.set("config.version", std::int64_t(3));
  REQUIRE_THROWS_WITH(io::model_from<nn::TransformerLM>(old), Contains("config.stream.scheme is missing"));
  // a scheme this build does not know is refused by name
  io::Checkpoint unknown = ck;
  unknown.set("config.stream.scheme", std::string("hyper"));
  REQUIRE_THROWS_WITH(io::model_from<nn::TransformerLM>(unknown),
                      Contains("config.stream.scheme holds a name this build does not know") &&
                          Contains("unknown stream scheme 'hyper' (expected plain, denseformer, value_residual"));
}

TEST_CASE("What cannot hold a stream scheme refuses it by name", "[stream][errors]") {
  ScratchDir dir;
  nn::TransformerLMConfig gpt2 = nn::gpt2_config({32, 8, 2, 8, 2, 0});
  gpt2.stream.scheme = "denseformer";
  nn::TransformerLM lm(gpt2);
  REQUIRE_THROWS_WITH(io::save_hf_gpt2(lm, dir.file("hf")),
                      Contains("save_hf_gpt2: the model's stream scheme is denseformer (DenseFormer, Pagliardini et al. "
                               "2024), which Hugging Face's models have no equivalent of"));
  nn::TransformerLMConfig llama = nn::llama_config({32, 8, 2, 8, 2, 0});
  llama.stream.scheme = "value_residual";
  nn::TransformerLM ll(llama);
  REQUIRE_THROWS_WITH(io::save_hf_llama(ll, dir.file("hf2")), Contains("save_hf_llama: the model's stream scheme is "
                                                                       "value_residual"));
  // activation checkpointing recomputes a block alone: not with values shared across blocks
  nn::TransformerLM vr(lm_config("value_residual"));
  REQUIRE_THROWS_WITH(vr.set_activation_checkpointing(true),
                      Contains("the stream scheme value_residual reaches into the blocks' attention"));
  nn::TransformerLM dense(lm_config("denseformer"));
  CHECK_NOTHROW(dense.set_activation_checkpointing(true));

  // settings of another scheme, and unknown schemes
  nn::TransformerLMConfig c = lm_config("plain");
  c.stream.dwa_period = 2;
  REQUIRE_THROWS_WITH(c.validate(), Contains("StreamConfig: dwa_period = 2 applies to denseformer only, not to plain; "
                                             "leave it at 1"));
  c = lm_config("denseformer");
  c.stream.value_lambda1 = 0.2;
  REQUIRE_THROWS_WITH(c.validate(), Contains("value_lambda1 = 0.2 applies to value_residual only"));
  c.stream.value_lambda1 = 0.5;
  c.stream.dwa_dilation = 0;
  REQUIRE_THROWS_WITH(c.validate(), Contains("dwa_dilation (0) and dwa_period (1) must be >= 1"));
  c = lm_config("hyper");
  REQUIRE_THROWS_WITH(nn::TransformerLM(c), Contains("unknown stream scheme 'hyper'"));
  const nn::StreamInfo again = nn::stream_info("denseformer");
  REQUIRE_THROWS_WITH(nn::register_stream(again),
                      Contains("register_stream: a stream scheme named 'denseformer' is already registered"));
}

TEST_CASE("--help lists the stream schemes with their formulas", "[stream][registry]") {
  const std::string help = nn::stream_help();
  CHECK_THAT(help, Contains("plain") && Contains("denseformer") && Contains("Σ_{j≤l} α_{l,j}·X_j") &&
                       Contains("V_n ← λ1·V_1 + λ2·V_n"));
  for (const nn::StreamInfo& s : nn::stream_registry()) {
    CHECK(!s.paper.empty());
    CHECK(!s.label.empty());
  }
}

TEST_CASE("The fuzzers' seeds hold a model file of each stream scheme, point-wise norm and newer placement, and each loads",
          "[stream][io]") {
  const std::string dir = TAPEGRAD_SOURCE_DIR "/tests/io/corpus/seeds/checkpoint/";
  const auto dense = io::load_model<nn::TransformerLM>(dir + "model_lm_denseformer.tgc");
  CHECK(dense->config.stream.scheme.name == "denseformer");
  CHECK(dense->config.stream.dwa_dilation == 2);
  const auto values = io::load_model<nn::TransformerLM>(dir + "model_lm_value_residual.tgc");
  CHECK(values->config.stream.value_lambda_learnable);
  const auto attnres = io::load_model<nn::TransformerLM>(dir + "model_lm_attention_residuals.tgc");
  CHECK(attnres->config.stream.attnres_block_size == 2);
  CHECK(io::load_model<nn::TransformerLM>(dir + "model_lm_dyt.tgc")->config.block.norm.name == "dyt");
  CHECK(io::load_model<nn::TransformerLM>(dir + "model_lm_derf.tgc")->config.block.norm.name == "derf");
  const auto gpas = io::load_model<nn::TransformerLM>(dir + "model_lm_gpas.tgc");  // and of each newer placement
  CHECK(gpas->config.block.placement == nn::Placement::gpas);
  CHECK(gpas->blocks->at<nn::TransformerBlock>(0)->gate.item() == 0.25);
}

TEST_CASE("The stream hooks see what the next block reads: the logit lens of a DenseFormer", "[stream][logit_lens]") {
  nn::TransformerLMConfig c = lm_config("denseformer");
  manual_seed(71);
  nn::TransformerLM lm(c);
  randomize_parameters_(*lm.stream, 72, 0.7);
  const Tensor tokens = tensor({1, 2, 3, 4, 5, 6}, {2, 3}, DType::int64), targets = tensor({2, 3, 4, 5, 6, 0}, {2, 3}, DType::int64);
  nn::StreamRecorder recorder(lm);
  nn::OutputRecorder outputs(*lm.blocks);
  const Tensor logits = lm.forward(tokens);
  const std::vector<Tensor> streams = recorder.streams();
  REQUIRE(streams.size() == 4);
  // after each block the average, not the block's output (which a hook on the block sees)
  CHECK(max_abs_diff(streams[1], outputs.outputs()[0]) > 1e-3);
  CHECK_CLOSE(head(lm, streams[3]), logits, 0.0);
  // so the lens's last layer is the model's own loss
  const std::vector<nn::LensLayer> lens = nn::logit_lens(lm, tokens, targets);
  REQUIRE(lens.size() == 4);
  CHECK(lens.back().loss == cross_entropy(logits.reshape({6, 7}), targets.reshape({6})).item());
  // a removed hook sees nothing
  int calls = 0;
  HookHandle h = lm.stream->register_stream_hook([&](std::int64_t, const Tensor&) { ++calls; });
  (void)lm.forward(tokens);
  h.remove();
  (void)lm.forward(tokens);
  CHECK(calls == 4);
}

TEST_CASE("A stream's own block formula replaces the placement's, on an input of any leading shape", "[stream]") {
  manual_seed(61);
  nn::TransformerLM lm(lm_config("plain"));
  randomize_parameters_(lm, 62, 0.5);
  nn::TransformerBlock& b = block(lm, 0);
  const Tensor x = randn({2, 3, 8}, f64);
  SECTION("Pre-LN written as the stream's formula gives the block's own output") {
    nn::BlockContext ctx;
    ctx.formula = [](const Tensor& h, const nn::BlockSublayers& F) {
      const Tensor y = h + F.attn(F.attn.N(h));
      return y + F.ffn(F.ffn.N(y));
    };
    CHECK_CLOSE(b.forward(x, ctx), b.forward(x), 0.0);
  }
  SECTION("the formula gets the stream as the scheme passes it: here two copies side by side") {
    nn::BlockContext ctx;
    Shape seen;
    ctx.formula = [&](const Tensor& h, const nn::BlockSublayers&) {
      seen = h.shape();
      return h;
    };
    const Tensor two = stack({x, x}, 2);  // (B, T, 2, C)
    CHECK_CLOSE(b.forward(two, ctx), two, 0.0);
    CHECK(seen == Shape{2, 3, 2, 8});
    REQUIRE_THROWS_WITH(b.forward(randn({2, 3, 2, 5}, f64), ctx), Contains("ending in d_model = 8") && Contains("[2, 3, 2, 5]"));
    REQUIRE_THROWS_WITH(b.forward(two), Contains("must be (B, T, d_model = 8)"));
  }
  SECTION("activation checkpointing, which recomputes the block alone, is refused with it by name") {
    b.checkpoint_activations = true;
    nn::BlockContext ctx;
    ctx.formula = [](const Tensor& h, const nn::BlockSublayers&) { return h; };
    REQUIRE_THROWS_WITH(b.forward(x.detach().requires_grad_(), ctx), Contains("ctx.formula"));
  }
}
