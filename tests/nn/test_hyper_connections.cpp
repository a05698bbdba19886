// test_hyper_connections.cpp — the widened stream of Hyper-Connections and mHC
// (nn/stream/hyper_connections.hpp): one block against its formula written out copy by copy;
// Sinkhorn–Knopp's rows and columns and its gradient; n = 1 at init is Pre-LN bit for bit (and
// n = 4 at init is Pre-LN with the head reading n·x); a float64 gradcheck of a whole small LM
// under each; generation on a KV cache; model files; what the stream hooks see (the sum over
// the copies, whose norm a diagnostic reads after every block); refusals by name.
#include <string>
#include <vector>

#include "io/io_helpers.hpp"
#include "nn/lm_gradcheck.hpp"
#include "nn/nn_helpers.hpp"
#include "support/gradcheck_catch.hpp"

using namespace tapegrad;
using namespace tapegrad::testing;
using Catch::Contains;

namespace {

constexpr DType f64 = DType::float64;

nn::TransformerLMConfig hc_config(const std::string& scheme, std::int64_t n = 3, bool dynamic = true,
                                  std::int64_t layers = 2) {
  nn::TransformerLMConfig c = tiny_lm(7, 6, layers);
  c.block.d_model = 8;
  c.block.d_ff = 16;
  c.block.dtype = f64;
  c.stream.scheme = scheme;
  c.stream.hc_rate = n;
  c.stream.hc_dynamic = dynamic;
  return c;
}

nn::TransformerBlock& block(nn::TransformerLM& lm, std::size_t l) {
  return static_cast<nn::TransformerBlock&>(*(*lm.blocks)[l]);
}

Tensor stream_param(nn::TransformerLM& lm, const std::string& name) {
  for (const auto& [n, p] : lm.stream->named_parameters())
    if (n == name) return p;
  FAIL("no stream parameter " << name);
  return {};
}

// Copy j of a widened stream (B, T, n, C), and entry j of the last dim of a coefficient.
Tensor copy_of(const Tensor& x, std::int64_t j) { return squeeze(narrow(x, 2, j, 1), 2); }
Tensor entry(const Tensor& t, std::int64_t j) { return narrow(t, t.dim() - 1, j, 1); }  // keeps a dim of 1

// x_i ← Σ_j res_ij·x_j + post_i·F(N(Σ_j pre_j·x_j)), one copy and one term at a time;
// pre, post (B, T, n), res (B, T, n, n).
Tensor connect_by_hand(const Tensor& x, const Tensor& pre, const Tensor& res, const Tensor& post,
                       const std::function<Tensor(const Tensor&)>& F) {
  const std::int64_t n = x.size(2);
  Tensor h_in = zeros_like(copy_of(x, 0));
  for (std::int64_t j = 0; j < n; ++j) h_in = h_in + entry(pre, j) * copy_of(x, j);
  const Tensor y = F(h_in);
  TensorList out;
  for (std::int64_t i = 0; i < n; ++i) {
    Tensor x_i = entry(post, i) * y;
    for (std::int64_t j = 0; j < n; ++j) x_i = x_i + entry(squeeze(narrow(res, 2, i, 1), 2), j) * copy_of(x, j);
    out.push_back(x_i);
  }
  return stack(out, 2);
}

}  // namespace

TEST_CASE("Sinkhorn–Knopp makes a doubly stochastic matrix, and its gradient passes through every iteration",
          "[stream][hc]") {
  SECTION("rows sum to 1 after any number of iterations, columns to within the convergence, on random logits") {
    // N(0, 1) logits, n = 2..5: after mHC's 20 iterations the columns are within 1e-3 (2e-5 at
    // worst over these seeds), within 1e-9 after 100; the rows are exact, normalized last
    for (std::uint64_t seed = 1; seed <= 20; ++seed) {
      INFO("seed " << seed);
      const std::int64_t n = 2 + static_cast<std::int64_t>(seed % 4);
      const Tensor L = param({3, n, n}, seed);
      for (auto [k, column_tol] : {std::pair<std::int64_t, double>{20, 1e-3}, {100, 1e-9}}) {
        INFO(k << " iterations");
        const Tensor S = nn::sinkhorn_knopp(L, k);
        CHECK_CLOSE(sum(S, {2}), ones({3, n}, f64), 1e-12);
        CHECK_CLOSE(sum(S, {1}), ones({3, n}, f64), column_tol);
        for (double v : S.to_vector()) CHECK(v > 0.0);
      }
    }
  }
  SECTION("near the identity, where mHC starts (b_res = I, small dynamic terms), 20 iterations reach 1e-9") {
    for (std::uint64_t seed = 1; seed <= 20; ++seed) {
      INFO("seed " << seed);
      const Tensor L = add(tensor({1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1}, {4, 4}, f64), param({2, 4, 4}, seed, 0.1));
      const Tensor S = nn::sinkhorn_knopp(L, 20);
      CHECK_CLOSE(sum(S, {2}), ones({2, 4}, f64), 1e-12);
      CHECK_CLOSE(sum(S, {1}), ones({2, 4}, f64), 1e-9);
    }
  }
  SECTION("it does not depend on a constant added to the logits (the largest is taken out)") {
    const Tensor L = param({4, 4}, 7);
    CHECK_CLOSE(nn::sinkhorn_knopp(L + 500.0, 20), nn::sinkhorn_knopp(L, 20), 1e-13);
  }
  SECTION("float64 gradcheck of the projection alone, 1 and 20 iterations") {
    const Tensor w = param({2, 3, 3}, 11);
    for (std::int64_t k : {1, 20}) {
      INFO(k << " iterations");
      CHECK_GRADCHECK([&](const TensorList& in) { return sum(mul(nn::sinkhorn_knopp(in[0], k), w)); },
                      {param({2, 3, 3}, 12).requires_grad_()});
    }
  }
  REQUIRE_THROWS_WITH(nn::sinkhorn_knopp(zeros({2, 3}, f64), 3), Contains("(..., n, n)"));
}

TEST_CASE("Hyper-Connections with n = 1 at init is the Pre-LN model bit for bit, and with n = 4 the head reads 4·x",
          "[stream][hc]") {
  const Tensor tokens = tensor({1, 2, 3, 4, 5, 6}, {2, 3}, DType::int64);
  nn::TransformerLMConfig plain_config = hc_config("hyper_connections", 4, true, 3);
  plain_config.stream = {};
  manual_seed(81);
  nn::TransformerLM plain(plain_config);
  for (bool dynamic : {false, true}) {
    INFO((dynamic ? "dynamic" : "static"));
    manual_seed(81);
    nn::TransformerLM hc(hc_config("hyper_connections", 1, dynamic, 3));
    // h_in = 1·x, x ← 1·x + 1·F(N(x)) and tanh(norm(x)·0) = 0: every product is exact
    CHECK_CLOSE(hc.forward(tokens), plain.forward(tokens), 0.0);
  }
  // n = 4: the copies start equal and, with H_res = I and H_post = 1, stay equal; each sublayer
  // reads one of them, which is Pre-LN's stream, and the head's norm reads their sum 4·x
  manual_seed(81);
  nn::TransformerLM wide(hc_config("hyper_connections", 4, true, 3));
  std::vector<Tensor> wide_streams, plain_streams;
  HookHandle a = wide.stream->register_stream_hook([&](std::int64_t, const Tensor& x) { wide_streams.push_back(x); });
  HookHandle b = plain.stream->register_stream_hook([&](std::int64_t, const Tensor& x) { plain_streams.push_back(x); });
  (void)wide.forward(tokens);
  (void)plain.forward(tokens);
  REQUIRE(wide_streams.size() == 4);
  for (std::size_t l = 0; l < 4; ++l) CHECK_CLOSE(wide_streams[l], mul(plain_streams[l], 4.0), 1e-12);
  // mHC's init is not Pre-LN even at n = 1: h_in = σ(1)·x, x ← x + 2σ(1)·F(N(h_in))
  manual_seed(81);
  nn::TransformerLM mhc(hc_config("mhc", 1, true, 3));
  CHECK(max_abs_diff(mhc.forward(tokens), plain.forward(tokens)) > 1e-3);
}

TEST_CASE("One block of each: the formula written out copy by copy", "[stream][hc]") {
  for (bool dynamic : {false, true}) {
    for (const std::string scheme : {"hyper_connections", "mhc"}) {
      INFO(scheme << (dynamic ? ", dynamic" : ", static"));
      const std::int64_t n = 3, C = 8;
      manual_seed(91);
      nn::TransformerLM lm(hc_config(scheme, n, dynamic));
      randomize_parameters_(lm, 92, 0.5);
      nn::TransformerBlock& b = block(lm, 1);  // sublayers k = 2 and 3: A_m starts on copy 2, then 0
      const Tensor x = randn({2, 3, n, C}, f64);
      // the connections of sublayer k on the stream x, as each paper writes them
      auto coefficients = [&](std::int64_t k, const Tensor& s) {
        const std::string p = "connections." + std::to_string(k) + ".";
        Tensor pre, res, post;
        if (scheme == "hyper_connections") {
          Tensor alpha = expand(stream_param(lm, p + "static_alpha"), {2, 3, n, n + 1});
          Tensor beta = expand(stream_param(lm, p + "static_beta"), {2, 3, n});
          if (dynamic) {
            const Tensor normed = layer_norm(s, {C}, stream_param(lm, p + "norm.weight"), stream_param(lm, p + "norm.bias"));
            alpha = alpha + tanh(matmul(normed, stream_param(lm, p + "dynamic_alpha_fn"))) * stream_param(lm, p + "dynamic_alpha_scale");
            beta = beta + tanh(matmul(normed, stream_param(lm, p + "dynamic_beta_fn"))) * stream_param(lm, p + "dynamic_beta_scale");
          }
          pre = squeeze(narrow(alpha, 3, 0, 1), 3);
          res = transpose(narrow(alpha, 3, 1, n), 2, 3);  // H_res_ij = α_{j, 1+i}
          post = beta;
        } else {
          Tensor pre_l = expand(stream_param(lm, p + "b_pre"), {2, 3, n}), post_l = expand(stream_param(lm, p + "b_post"), {2, 3, n});
          Tensor res_l = expand(stream_param(lm, p + "b_res"), {2, 3, n, n});
          if (dynamic) {
            const Tensor v = rms_norm(reshape(s, {2, 3, n * C}), {n * C}, stream_param(lm, p + "norm.weight"), 1e-5);
            const Tensor proj = matmul(v, stream_param(lm, p + "phi"));
            pre_l = pre_l + stream_param(lm, p + "alpha_pre") * narrow(proj, 2, 0, n);
            post_l = post_l + stream_param(lm, p + "alpha_post") * narrow(proj, 2, n, n);
            res_l = res_l + stream_param(lm, p + "alpha_res") * reshape(narrow(proj, 2, 2 * n, n * n), {2, 3, n, n});
          }
          pre = sigmoid(pre_l), post = mul(sigmoid(post_l), 2.0), res = nn::sinkhorn_knopp(res_l, 20);
        }
        return std::tuple{pre, res, post};
      };
      auto [pre1, res1, post1] = coefficients(2, x);
      const Tensor h = connect_by_hand(x, pre1, res1, post1, [&](const Tensor& v) {
        return b.attn->forward(b.attn_residual->norm->forward(v));
      });
      auto [pre2, res2, post2] = coefficients(3, h);
      const Tensor y = connect_by_hand(h, pre2, res2, post2, [&](const Tensor& v) {
        return b.ffn->forward(b.ffn_residual->norm->forward(v));
      });
      nn::StreamState s;
      s.x = x;
      nn::BlockContext ctx;
      lm.stream->run_block(s, b, ctx, 1);
      CHECK_CLOSE(s.x, y, 1e-13);
      CHECK(!ctx.formula);  // the formula is the block's for this call only
    }
  }
}

TEST_CASE("The stream at init: HC's static matrices and mHC's biases as the papers start them", "[stream][hc]") {
  nn::TransformerLM hc(hc_config("hyper_connections", 3, true, 2));
  CHECK(stream_param(hc, "connections.1.static_alpha").to_vector() ==
        std::vector<double>{0, 1, 0, 0, 1, 0, 1, 0, 0, 0, 0, 1});  // A_m = e_1 (sublayer 1 mod 3), A_r = I
  CHECK(stream_param(hc, "connections.3.static_beta").to_vector() == std::vector<double>{1, 1, 1});
  CHECK(stream_param(hc, "connections.0.dynamic_alpha_fn").shape() == Shape{8, 4});
  CHECK(stream_param(hc, "connections.0.dynamic_alpha_scale").item() == 0.01);
  CHECK(hc.stream->named_parameters().size() == 4 * 8);
  CHECK(io::state_dict(hc).contains("stream.connections.3.norm.weight"));
  nn::TransformerLM static_hc(hc_config("hyper_connections", 3, false, 2));
  CHECK(static_hc.stream->named_parameters().size() == 4 * 2);
  nn::TransformerLM mhc(hc_config("mhc", 3, true, 2));
  CHECK(stream_param(mhc, "connections.2.b_pre").to_vector() == std::vector<double>{0, 0, 1});
  CHECK(stream_param(mhc, "connections.0.phi").shape() == Shape{24, 15});
  CHECK(io::state_dict(mhc).contains("stream.connections.3.alpha_res"));
}

TEST_CASE("Each widened stream's LM passes a float64 gradcheck", "[stream][hc][gradcheck]") {
  for (const std::string scheme : {"hyper_connections", "mhc"}) {
    for (bool dynamic : {false, true}) {
      INFO(scheme << (dynamic ? ", dynamic" : ", static"));
      nn::TransformerLMConfig c = hc_config(scheme, 2, dynamic);
      c.vocab_size = 5, c.max_seq_len = 3;
      if (scheme == "mhc") c.stream.sinkhorn_iterations = 5;
      manual_seed(101);
      nn::TransformerLM lm(c);
      randomize_parameters_(lm, 102, 0.5);
      CHECK_LM_GRADCHECK(lm, 103);
    }
  }
}

TEST_CASE("Generation on a KV cache under a widened stream equals the whole forward", "[stream][hc][generate]") {
  for (const std::string scheme : {"hyper_connections", "mhc"}) {
    INFO(scheme);
    manual_seed(111);
    nn::TransformerLM lm(hc_config(scheme));
    randomize_parameters_(lm, 112, 0.5);
    lm.eval();
    const Tensor tokens = tensor({1, 2, 3, 4, 5, 6}, {1, 6}, DType::int64);
    NoGradGuard no_grad;
    const Tensor whole = lm.forward(tokens);
    nn::KVCache cache = lm.make_kv_cache(1, 6);
    const Tensor first = lm.forward_cached(narrow(tokens, 1, 0, 4), cache);
    const Tensor rest = lm.forward_cached(narrow(tokens, 1, 4, 2), cache);
    CHECK_CLOSE(cat({first, rest}, 1), whole, 1e-12);
  }
}

TEST_CASE("Model files keep a widened stream's settings and weights, and version-4 files load with the defaults",
          "[stream][hc][io]") {
  for (const std::string scheme : {"hyper_connections", "mhc"}) {
    INFO(scheme);
    nn::TransformerLMConfig c = hc_config(scheme, 2, scheme == "mhc");
    if (scheme == "mhc") c.stream.sinkhorn_iterations = 7;
    manual_seed(121);
    nn::TransformerLM lm(c);
    randomize_parameters_(*lm.stream, 122, 0.5);
    CHECK_LM_FILE_ROUND_TRIP(lm);
  }
  // a version-4 file has no hc_rate, hc_dynamic, sinkhorn_iterations: its scheme did not read them
  nn::TransformerLMConfig dense = hc_config("denseformer", 4);
  dense.stream.hc_rate = 4;
  io::Checkpoint old;
  old.kind = "state_dict";
  for (const auto& entry : io::config_metadata(dense))
    if (entry.first.find("hc_") == std::string::npos && entry.first.find("sinkhorn") == std::string::npos)
      old.metadata.push_back(entry);
  old.set("config.version", std::int64_t(4));
  nn::TransformerLM old_model(dense);
  old.section("model") = state_dict(old_model);
  CHECK(io::model_from<nn::TransformerLM>(old)->config == dense);
  old.set("config.version", std::int64_t(5));
  REQUIRE_THROWS_WITH(io::model_from<nn::TransformerLM>(old), Contains("config.stream.hc_rate is missing"));
}

TEST_CASE("The stream hooks see the sum over the copies: the stream's norm after every block", "[stream][hc]") {
  for (const std::string scheme : {"hyper_connections", "mhc"}) {
    INFO(scheme);
    manual_seed(131);
    nn::TransformerLM lm(hc_config(scheme, 3, true, 4));
    randomize_parameters_(*lm.stream, 132, 0.3);
    const Tensor tokens = tensor({1, 2, 3, 4, 5, 6}, {2, 3}, DType::int64);
    // the diagnostic: ‖Σ_i x_i‖ after each block, read by a stream hook
    std::vector<double> norms;
    std::vector<Tensor> seen;
    HookHandle h = lm.stream->register_stream_hook([&](std::int64_t, const Tensor& x) {
      norms.push_back(std::sqrt(sum(mul(x, x)).item()));
      seen.push_back(x);
    });
    const Tensor logits = lm.forward(tokens);
    REQUIRE(norms.size() == 5);
    // the same by hand: the copies after each block, summed
    nn::StreamState s = lm.stream->begin(add(lm.tok_emb->forward(tokens), lm.pos_emb->forward(arange(3, DType::int64))));
    CHECK(s.x.shape() == Shape{2, 3, 3, 8});
    CHECK_CLOSE(seen[0], mul(copy_of(s.x, 0), 3.0), 0.0);
    nn::BlockContext ctx;
    for (std::size_t l = 0; l < 4; ++l) {
      lm.stream->run_block(s, block(lm, l), ctx, static_cast<std::int64_t>(l));
      CHECK_CLOSE(seen[l + 1], sum(nn::WidenedStream::copies(s), {2}), 1e-13);
    }
    CHECK_CLOSE(linear(lm.final_norm->forward(seen.back()), lm.tok_emb->weight), logits, 1e-13);  // the head reads it
    h.remove();
  }
}

TEST_CASE("What cannot hold a widened stream refuses it by name", "[stream][hc][errors]") {
  ScratchDir dir;
  nn::TransformerLMConfig gpt2 = nn::gpt2_config({32, 8, 2, 8, 2, 0});
  gpt2.stream.scheme = "hyper_connections";
  nn::TransformerLM lm(gpt2);
  REQUIRE_THROWS_WITH(io::save_hf_gpt2(lm, dir.file("hf")),
                      Contains("save_hf_gpt2: the model's stream scheme is hyper_connections (Hyper-Connections, Zhu "
                               "et al. 2024), which Hugging Face's models have no equivalent of"));
  nn::TransformerLMConfig llama = nn::llama_config({32, 8, 2, 8, 2, 0});
  llama.stream.scheme = "mhc";
  nn::TransformerLM ll(llama);
  REQUIRE_THROWS_WITH(io::save_hf_llama(ll, dir.file("hf2")), Contains("save_hf_llama: the model's stream scheme is mhc"));
  nn::TransformerLM hc(hc_config("mhc"));
  REQUIRE_THROWS_WITH(hc.set_activation_checkpointing(true), Contains("the stream scheme mhc reaches into the blocks"));

  // the scheme carries its own Pre-LN join
  nn::TransformerLMConfig c = hc_config("hyper_connections");
  c.block.placement = nn::Placement::post;
  REQUIRE_THROWS_WITH(nn::TransformerLM(c), Contains("hyper_connections joins each sublayer to the stream itself") &&
                                                Contains("placement must be pre, got post"));
  c = hc_config("mhc");
  c.block.residual_scale = 0.5;
  REQUIRE_THROWS_WITH(nn::TransformerLM(c), Contains("mhc scales the residual with its own H_res"));
  // settings of another scheme
  c = hc_config("denseformer");
  REQUIRE_THROWS_WITH(c.validate(), Contains("StreamConfig: hc_rate = 3 applies to hyper_connections or mhc only, "
                                             "not to denseformer; leave it at 4"));
  c = hc_config("plain", 4, false);
  REQUIRE_THROWS_WITH(c.validate(), Contains("hc_dynamic = false applies to hyper_connections or mhc only, not to plain"));
  c = hc_config("hyper_connections");
  c.stream.sinkhorn_iterations = 5;
  REQUIRE_THROWS_WITH(c.validate(), Contains("sinkhorn_iterations = 5 applies to mhc only, not to hyper_connections; "
                                             "leave it at 20"));
  c = hc_config("mhc", 0);
  REQUIRE_THROWS_WITH(c.validate(), Contains("hc_rate (0) and sinkhorn_iterations (20) must be >= 1"));
  c = hc_config("hyper_connections");
  c.stream.dwa_period = 2;
  REQUIRE_THROWS_WITH(c.validate(), Contains("dwa_period = 2 applies to denseformer only, not to hyper_connections"));
}

TEST_CASE("The fuzzers' seeds hold a model file of hyper_connections and of mhc, and each loads", "[stream][hc][io]") {
  const std::string dir = TAPEGRAD_SOURCE_DIR "/tests/io/corpus/seeds/checkpoint/";
  const auto hc = io::load_model<nn::TransformerLM>(dir + "model_lm_hyper_connections.tgc");
  CHECK(hc->config.stream.scheme.name == "hyper_connections");
  CHECK(hc->config.stream.hc_rate == 2);
  const auto mhc = io::load_model<nn::TransformerLM>(dir + "model_lm_mhc.tgc");
  CHECK(mhc->config.stream.sinkhorn_iterations == 5);
}
