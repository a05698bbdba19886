// test_attention_residuals.cpp — Attention Residuals (nn/stream/attention_residuals.cpp): the LM
// against its formula written out by hand from its parameters (Full and Block AttnRes), a
// uniform average over the depth at init, a float64 gradcheck of a whole small LM, generation
// on a KV cache equal to the whole forward, model files, and what refuses it, by name.
#include <map>
#include <string>
#include <vector>

#include "io/io_helpers.hpp"
#include "nn/lm_cache_check.hpp"
#include "nn/lm_gradcheck.hpp"
#include "nn/nn_helpers.hpp"
#include "support/gradcheck_catch.hpp"

using namespace tapegrad;
using namespace tapegrad::testing;
using Catch::Contains;

namespace {

constexpr DType f64 = DType::float64;

nn::TransformerLMConfig attnres_config(std::int64_t block_size = 1, std::int64_t layers = 3) {
  nn::TransformerLMConfig c = tiny_lm(7, 6, layers);
  c.block.d_model = 8;
  c.block.d_ff = 16;
  c.block.dtype = f64;
  c.stream.scheme = "attention_residuals";
  c.stream.attnres_block_size = block_size;
  return c;
}

nn::TransformerBlock& block(nn::TransformerLM& lm, std::size_t l) {
  return static_cast<nn::TransformerBlock&>(*(*lm.blocks)[l]);
}

// The LM written out: the embedding, then each sublayer reading a softmax over the depth of the
// block sums (with the current partial sum), its output joining its block, and the output's
// softmax through the final norm and the tied head. Weights, when given, replace the softmax
// (the uniform average at init); the logits and the softmax are ops other than the scheme's
// (a norm per source, a cat, a softmax over the last dim).
Tensor by_hand(nn::TransformerLM& lm, const Tensor& tokens, std::int64_t S, bool uniform = false) {
  std::map<std::string, Tensor> p;
  for (const auto& [name, t] : lm.stream->named_parameters()) p[name] = t;
  const double eps = lm.config.block.norm_eps;
  std::vector<Tensor> blocks = {add(lm.tok_emb->forward(tokens), lm.pos_emb->forward(arange(tokens.size(1), DType::int64)))};
  Tensor partial;
  auto read = [&](std::int64_t k) {
    std::vector<Tensor> v = blocks;
    if (partial.defined()) v.push_back(partial);
    const std::string q = "depth." + std::to_string(k) + ".";
    TensorList logits;  // w_k·RMSNorm_k(v_i): (B, T, 1) each
    for (const Tensor& vi : v)
      logits.push_back(sum(mul(rms_norm(vi, {8}, p.at(q + "norm.weight"), eps), p.at(q + "query")), {2}, true));
    const Tensor alpha = softmax(cat(logits, 2), 2);  // (B, T, N)
    Tensor h;
    for (std::size_t i = 0; i < v.size(); ++i) {
      const Tensor term = uniform ? mul(v[i], 1.0 / static_cast<double>(v.size()))
                                  : mul(v[i], narrow(alpha, 2, static_cast<std::int64_t>(i), 1));
      h = h.defined() ? add(h, term) : term;
    }
    return h;
  };
  auto write = [&](const Tensor& v, std::int64_t k) {
    partial = partial.defined() ? add(partial, v) : v;
    if ((k + 1) % S == 0) blocks.push_back(partial), partial = Tensor();
  };
  for (std::int64_t l = 0; l < lm.config.n_layers; ++l) {
    nn::TransformerBlock& b = block(lm, static_cast<std::size_t>(l));
    write(b.attn->forward(b.attn_residual->norm->forward(read(2 * l))), 2 * l);
    write(b.ffn->forward(b.ffn_residual->norm->forward(read(2 * l + 1))), 2 * l + 1);
  }
  const Tensor h = lm.final_norm->forward(read(2 * lm.config.n_layers));
  return linear(h, lm.tok_emb->weight);
}

}  // namespace

TEST_CASE("Attention Residuals: each sublayer reads softmax_i(w_k·RMSNorm(v_i)) over the depth, written out",
          "[stream][attnres]") {
  const Tensor tokens = tensor({1, 2, 3, 4, 5, 6}, {2, 3}, DType::int64);
  for (std::int64_t S : {1, 2, 3, 4}) {
    INFO("attnres_block_size " << S);
    manual_seed(81);
    nn::TransformerLM lm(attnres_config(S));
    randomize_parameters_(lm, 82, 0.7);
    CHECK_CLOSE(lm.forward(tokens), by_hand(lm, tokens, S), 1e-12);
  }
  SECTION("one query and one key norm per sublayer and one for the output: stream.depth.k, k = 0 .. 2L") {
    nn::TransformerLM lm(attnres_config(1, 3));
    const auto state = io::state_dict(lm);
    CHECK(state.contains("stream.depth.0.query"));
    CHECK(state.contains("stream.depth.6.norm.weight"));
    CHECK(!state.contains("stream.depth.7.query"));
    CHECK(lm.stream->parameters().size() == 14);
  }
}

TEST_CASE("Attention Residuals at init: zero queries, so every sublayer reads the plain mean of what came before",
          "[stream][attnres]") {
  const Tensor tokens = tensor({1, 2, 3, 4, 5, 6}, {2, 3}, DType::int64);
  for (std::int64_t S : {1, 3}) {
    INFO("attnres_block_size " << S);
    manual_seed(91);
    nn::TransformerLM lm(attnres_config(S));
    for (const auto& [name, t] : lm.stream->named_parameters()) {
      INFO(name);
      const std::vector<double> v = t.to_vector();
      CHECK(v == std::vector<double>(v.size(), name.ends_with("query") ? 0.0 : 1.0));
    }
    for (const auto& [name, t] : lm.named_parameters())  // the rest away from init, the depth's weights kept
      if (name.rfind("stream.", 0) != 0) randomize_(t, 92, 0.7);
    CHECK_CLOSE(lm.forward(tokens), by_hand(lm, tokens, S, /*uniform=*/true), 1e-12);
  }
}

TEST_CASE("Attention Residuals: a float64 gradcheck of a whole LM, Full and Block", "[stream][attnres][gradcheck]") {
  for (std::int64_t S : {1, 3}) {
    INFO("attnres_block_size " << S);
    nn::TransformerLMConfig c = attnres_config(S, 2);
    c.vocab_size = 5, c.max_seq_len = 3;
    manual_seed(101);
    nn::TransformerLM lm(c);
    randomize_parameters_(lm, 102, 0.5);
    CHECK_LM_GRADCHECK(lm, 103);
  }
}

TEST_CASE("Attention Residuals: generation on a KV cache equals the whole forward", "[stream][attnres][generate]") {
  for (std::int64_t S : {1, 3}) {
    INFO("attnres_block_size " << S);
    manual_seed(111);
    nn::TransformerLM lm(attnres_config(S));
    randomize_parameters_(lm, 112, 0.5);
    lm.eval();
    CHECK_LM_CACHED_EQUALS_WHOLE(lm);
  }
}

TEST_CASE("Attention Residuals: model files keep the scheme and its block size, and older files load without it",
          "[stream][attnres][io]") {
  manual_seed(121);
  nn::TransformerLM lm(attnres_config(2));
  randomize_parameters_(lm, 122, 0.5);
  CHECK_LM_FILE_ROUND_TRIP(lm);
  // a version-4 file has no attnres_block_size: 1, which no scheme it could name used
  nn::TransformerLMConfig c = attnres_config(1);
  c.stream.scheme = "plain";
  io::Checkpoint old;
  old.kind = "state_dict";
  for (const auto& entry : io::config_metadata(c))
    if (entry.first != "config.stream.attnres_block_size") old.metadata.push_back(entry);
  old.set("config.version", std::int64_t(4));
  nn::TransformerLM old_model(c);
  old.section("model") = state_dict(old_model);
  CHECK(io::model_from<nn::TransformerLM>(old)->config == c);
  old.set("config.version", std::int64_t(5));
  REQUIRE_THROWS_WITH(io::model_from<nn::TransformerLM>(old), Contains("config.stream.attnres_block_size is missing"));
}

TEST_CASE("Attention Residuals: what does not fit it refuses it by name", "[stream][attnres][errors]") {
  SECTION("placements other than Pre-LN, and a residual scale") {
    nn::TransformerLMConfig c = attnres_config();
    c.block.placement = "post";
    REQUIRE_THROWS_WITH(nn::TransformerLM(c), Contains("attention_residuals: the paper's sublayers are Pre-LN") &&
                                                  Contains("placement must be pre, got post"));
    c.block.placement = "pre";
    c.block.residual_scale = 0.5;
    REQUIRE_THROWS_WITH(nn::TransformerLM(c), Contains("attention_residuals: residual_scale = 0.5"));
  }
  SECTION("its setting elsewhere, and a block size below 1") {
    nn::TransformerLMConfig c = attnres_config(2);
    c.stream.scheme = "denseformer";
    REQUIRE_THROWS_WITH(c.validate(), Contains("StreamConfig: attnres_block_size = 2 applies to attention_residuals "
                                               "only, not to denseformer; leave it at 1"));
    c = attnres_config(0);
    REQUIRE_THROWS_WITH(c.validate(), Contains("attnres_block_size must be >= 1"));
  }
  SECTION("the Hugging Face exports and activation checkpointing") {
    ScratchDir dir;
    nn::TransformerLMConfig llama = nn::llama_config({32, 8, 2, 8, 2, 0});
    llama.stream.scheme = "attention_residuals";
    nn::TransformerLM ll(llama);
    REQUIRE_THROWS_WITH(io::save_hf_llama(ll, dir.file("hf")),
                        Contains("save_hf_llama: the model's stream scheme is attention_residuals (AttnRes, Kimi "
                                 "Team 2026 (Attention Residuals))"));
    nn::TransformerLMConfig gpt2 = nn::gpt2_config({32, 8, 2, 8, 2, 0});
    gpt2.stream.scheme = "attention_residuals";
    nn::TransformerLM g(gpt2);
    REQUIRE_THROWS_WITH(io::save_hf_gpt2(g, dir.file("hf2")), Contains("stream scheme is attention_residuals"));
    REQUIRE_THROWS_WITH(g.set_activation_checkpointing(true), Contains("the stream scheme attention_residuals"));
  }
}
