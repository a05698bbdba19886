// test_generate.cpp — generation on a KV cache against recomputing the whole sequence at every
// step (the reference loop below): the same tokens for greedy and seeded sampling (temperature,
// top-k, top-p), learned positions and RoPE, MHA and GQA, batches, short and long prompts, stop
// tokens; each cached step's logits equal the recomputed last position's (1e-5 in float32,
// 1e-12 in float64); RoPE past max_seq_len, learned positions refused there; top-p's nucleus;
// the option errors; the cache refused in grad mode.
#include <cmath>
#include <map>
#include <string>

#include "nn/nn_helpers.hpp"
#include "support/tensor_diff.hpp"

using namespace tapegrad;
using Catch::Contains;
using tapegrad::testing::max_abs_diff;
using tapegrad::testing::tokens_of;

namespace {

constexpr std::int64_t kVocab = 11;

// 2 layers, d_model 16, 4 heads; larger weights than gpt2's init, so the logits are far from
// uniform and greedy and sampled runs differ.
nn::TransformerLMConfig lm_config(bool rope, std::int64_t n_kv_heads, std::int64_t max_seq_len = 12,
                                  DType dtype = DType::float32) {
  nn::TransformerLMConfig c;
  c.vocab_size = kVocab;
  c.max_seq_len = max_seq_len;
  c.n_layers = 2;
  c.block.d_model = 16;
  c.block.n_heads = 4;
  c.block.n_kv_heads = n_kv_heads;
  c.block.d_ff = 32;
  c.block.rope = rope;
  c.block.dtype = dtype;
  c.init = nn::InitScheme::pytorch;
  return c;
}

std::string name_of(bool rope, std::int64_t kv) {
  return std::string(rope ? "rope" : "learned positions") + ", n_kv_heads " + std::to_string(kv);
}

// The reference: forward() on the whole sequence at every step, the next token from its last
// position with the same rule and the same draws as generate() (an ended row repeats its stop
// token and draws nothing; the call ends when every row has ended).
std::vector<std::int64_t> recompute_generate(nn::TransformerLM& lm, const Tensor& prompt, std::int64_t n,
                                             const nn::GenerateOptions& o) {
  NoGradGuard no_grad;
  lm.eval();
  const std::int64_t B = prompt.size(0), V = lm.config.vocab_size;
  std::vector<std::vector<std::int64_t>> seqs(B);
  const std::vector<std::int64_t> flat = prompt.to_vector<std::int64_t>();
  for (std::int64_t b = 0; b < B; ++b) seqs[b].assign(flat.begin() + b * prompt.size(1), flat.begin() + (b + 1) * prompt.size(1));
  std::vector<bool> ended(B, false);
  for (std::int64_t step = 0; step < n; ++step) {
    std::vector<std::int64_t> all;
    for (const auto& s : seqs) all.insert(all.end(), s.begin(), s.end());
    const auto len = static_cast<std::int64_t>(seqs[0].size());
    const std::vector<double> last = narrow(lm.forward(tokens_of(all, B)), 1, len - 1, 1).to_vector();
    for (std::int64_t b = 0; b < B; ++b) {
      const std::int64_t next =
          ended[b] ? seqs[b].back() : nn::next_token({last.begin() + b * V, last.begin() + (b + 1) * V}, o, *o.gen);
      for (std::int64_t s : o.stop_tokens) ended[b] = ended[b] || next == s;
      seqs[b].push_back(next);
    }
    if (std::all_of(ended.begin(), ended.end(), [](bool e) { return e; })) break;
  }
  std::vector<std::int64_t> out;
  for (const auto& s : seqs) out.insert(out.end(), s.begin(), s.end());
  return out;
}

// generate() and the reference with fresh generators of one seed.
void check_same_tokens(nn::TransformerLM& lm, const Tensor& prompt, std::int64_t n, nn::GenerateOptions o,
                       std::uint64_t seed = 7) {
  Generator g1(seed), g2(seed);
  o.gen = &g1;
  const std::vector<std::int64_t> cached = lm.generate(prompt, n, o).to_vector<std::int64_t>();
  o.gen = &g2;
  CHECK(cached == recompute_generate(lm, prompt, n, o));
}

nn::GenerateOptions sampling(double temperature, std::int64_t top_k = 0, double top_p = 1.0) {
  nn::GenerateOptions o;
  o.temperature = temperature;
  o.top_k = top_k;
  o.top_p = top_p;
  return o;
}

}  // namespace

TEST_CASE("generate on a KV cache gives the tokens of recomputing the sequence at every step",
          "[generate][kv_cache]") {
  const std::map<std::string, nn::GenerateOptions> rules = {
      {"greedy", sampling(0)},
      {"temperature 1.3", sampling(1.3)},
      {"top-k 3, temperature 1.5", sampling(1.5, 3)},
      {"top-p 0.8", sampling(1.0, 0, 0.8)},
      {"top-k 5 and top-p 0.6, temperature 2", sampling(2.0, 5, 0.6)},
  };
  for (bool rope : {false, true})
    for (std::int64_t kv : {4, 2, 1}) {  // MHA, GQA, MQA
      INFO(name_of(rope, kv));
      manual_seed(30 + kv);
      nn::TransformerLM lm(lm_config(rope, kv));
      for (const auto& [rule, o] : rules) {
        INFO(rule);
        check_same_tokens(lm, tokens_of({5}, 1), 11, o);                            // a prompt of 1, to max_seq_len
        check_same_tokens(lm, tokens_of({1, 2, 3, 4, 9, 8, 7, 6, 0, 0, 1, 2}, 3), 8, o);  // B 3, a prompt of 4
      }
    }
}

TEST_CASE("each cached step's logits equal the recomputed last position's", "[generate][kv_cache]") {
  for (DType dtype : {DType::float32, DType::float64}) {
    const double tol = dtype == DType::float32 ? 1e-5 : 1e-12;
    for (bool rope : {false, true})
      for (std::int64_t kv : {4, 2, 1}) {
        INFO(name_of(rope, kv) << ", " << dtype_name(dtype));
        manual_seed(40);
        nn::TransformerLM lm(lm_config(rope, kv, 12, dtype));
        lm.eval();
        NoGradGuard no_grad;
        std::vector<std::int64_t> seq{3, 1, 4, 1, 5, 9};  // B 2, a prompt of 3
        nn::KVCache cache = lm.make_kv_cache(2, 12);
        // the prompt: every position's logits
        CHECK(max_abs_diff(lm.forward_cached(tokens_of(seq, 2), cache), lm.forward(tokens_of(seq, 2))) <= tol);
        CHECK(cache.length() == 3);
        // one token per step, then 3 at once (3 queries, bottom-right causal, after 6 cached keys)
        const std::vector<std::vector<std::int64_t>> steps = {{2, 6}, {5, 3}, {5, 8}, {9, 7, 9, 3, 2, 3}, {8, 4}};
        for (const auto& fed : steps) {
          const std::int64_t Tn = static_cast<std::int64_t>(fed.size()) / 2, len = cache.length() + Tn;
          std::vector<std::int64_t> next;
          for (std::int64_t b = 0; b < 2; ++b) {
            next.insert(next.end(), seq.begin() + b * (len - Tn), seq.begin() + (b + 1) * (len - Tn));
            next.insert(next.end(), fed.begin() + b * Tn, fed.begin() + (b + 1) * Tn);
          }
          seq = next;
          const Tensor cached = lm.forward_cached(tokens_of(fed, 2), cache);  // (2, Tn, V)
          const Tensor full = narrow(lm.forward(tokens_of(seq, 2)), 1, len - Tn, Tn);
          INFO("length " << len);
          CHECK(max_abs_diff(cached, full) <= tol);
        }
        CHECK(cache.length() == 10);
      }
  }
}

TEST_CASE("the KV cache stores the kv heads, not repeated to the query heads", "[generate][kv_cache]") {
  nn::TransformerLM lm(lm_config(true, 1));
  nn::KVCache cache = lm.make_kv_cache(2, 5);
  CHECK(cache.n_layers() == 2);
  CHECK(cache.max_length() == 5);
  const Tensor k = zeros({2, 1, 3, 4}), v = ones({2, 1, 3, 4});
  const auto [ks, vs] = cache.store(0, k, v);
  CHECK(ks.shape() == Shape{2, 1, 3, 4});  // (B, Hkv = 1, length, D)
  CHECK(vs.to_vector() == v.to_vector());
  REQUIRE_THROWS_WITH(cache.store(0, zeros({2, 4, 3, 4}), zeros({2, 4, 3, 4})),
                      Contains("KVCache: new keys and values must be (B, Hkv, Tn, D)"));
  cache.advance(3);
  REQUIRE_THROWS_WITH(cache.store(1, zeros({2, 1, 3, 4}), zeros({2, 1, 3, 4})),
                      Contains("storing 3 positions after 3 exceeds its max_length 5"));
}

TEST_CASE("generate stops a row at a stop token and pads it with that token", "[generate][stop]") {
  for (bool rope : {false, true}) {
    INFO(name_of(rope, 2));
    manual_seed(50);
    nn::TransformerLM lm(lm_config(rope, 2));
    const Tensor prompt = tokens_of({1, 2, 3, 7, 7, 7}, 2);
    nn::GenerateOptions greedy = sampling(0);
    const std::vector<std::int64_t> free_run = lm.generate(prompt, 9, greedy).to_vector<std::int64_t>();  // (2, 12)
    // row 0's third new token stops it; row 1 goes on until it emits one too or the end
    nn::GenerateOptions stop = greedy;
    stop.stop_tokens = {free_run[5]};
    const Tensor out = lm.generate(prompt, 9, stop);
    const std::vector<std::int64_t> rows = out.to_vector<std::int64_t>();
    const std::int64_t width = out.size(1);
    for (std::int64_t t = 0; t < width; ++t) {
      INFO("position " << t);
      if (t <= 5) CHECK(rows[t] == free_run[t]);  // up to the stop token as without it
      const std::int64_t first_stop = std::find(free_run.begin() + 3, free_run.begin() + 12, free_run[5]) - free_run.begin();
      if (t >= first_stop) CHECK(rows[t] == free_run[5]);  // then the stop token, repeated
    }
    check_same_tokens(lm, prompt, 9, stop);
    // a sampled run with two stop tokens, and a batch where every row stops: the call ends early
    nn::GenerateOptions sampled = sampling(1.5, 0, 0.9);
    sampled.stop_tokens = {0, 4};
    check_same_tokens(lm, prompt, 9, sampled, 3);
    nn::GenerateOptions every = greedy;
    every.stop_tokens = {free_run[3], free_run[15]};  // each row's first new token
    CHECK(lm.generate(prompt, 9, every).shape() == Shape{2, 4});
  }
}

TEST_CASE("RoPE generates past max_seq_len, learned positions are refused there", "[generate]") {
  manual_seed(60);
  nn::TransformerLM lm(lm_config(true, 2, 8));
  const Tensor prompt = tokens_of({4, 2, 6}, 1);
  for (const nn::GenerateOptions& o : {sampling(0), sampling(1.2, 4, 0.9)}) {
    Generator g1(5), g2(5);
    nn::GenerateOptions a = o, b = o;
    a.gen = &g1;
    b.gen = &g2;
    const Tensor out = lm.generate(prompt, 17, a);  // 20 tokens, max_seq_len 8
    CHECK(out.shape() == Shape{1, 20});
    // rope has no position table: the same weights with max_seq_len 32 recompute any length
    nn::TransformerLM twin(lm_config(true, 2, 32));
    io::load_state_dict(twin, io::state_dict(lm));
    CHECK(out.to_vector<std::int64_t>() == recompute_generate(twin, prompt, 17, b));
  }
  nn::TransformerLM learned(lm_config(false, 2, 8));
  CHECK(learned.generate(prompt, 5, sampling(0)).shape() == Shape{1, 8});
  REQUIRE_THROWS_AS(learned.generate(prompt, 6, sampling(0)), ValueError);
  REQUIRE_THROWS_WITH(learned.generate(prompt, 6, sampling(0)),
                      Contains("generate: the prompt (3 tokens) and max_new_tokens (6) make 9 tokens, past max_seq_len 8 "
                               "of this model's learned positions (a rope model generates past max_seq_len; this one does with "
                               "GenerateOptions::sliding_window)"));
  CHECK(learned.max_length() == 8);
  CHECK_FALSE(lm.max_length().has_value());
}

TEST_CASE("top-p samples from the nucleus, renormalized", "[generate][sampling]") {
  // probabilities 0.5, 0.3, 0.15, 0.05: the nucleus of p = 0.75 is {0, 1} (0.5 < 0.75 <= 0.8)
  const std::vector<double> logits = {std::log(0.5), std::log(0.3), std::log(0.15), std::log(0.05)};
  Generator gen(9);
  nn::GenerateOptions o = sampling(1.0, 0, 0.75);
  std::vector<int> counts(4, 0);
  const int n = 4000;
  for (int i = 0; i < n; ++i) ++counts[nn::next_token(logits, o, gen)];
  CHECK(counts[2] == 0);
  CHECK(counts[3] == 0);
  CHECK(counts[0] / double(n) == Approx(0.5 / 0.8).margin(0.03));  // renormalized: 0.625
  // p below the largest probability: the argmax alone
  o.top_p = 0.4;
  for (int i = 0; i < 50; ++i) CHECK(nn::next_token(logits, o, gen) == 0);
  // top_p = 1 keeps every token, with the same draws as no top-p at all
  o.top_p = 1.0;
  Generator a(4), b(4);
  nn::GenerateOptions plain = sampling(1.0);
  for (int i = 0; i < 50; ++i) CHECK(nn::next_token(logits, o, a) == nn::next_token(logits, plain, b));
}

TEST_CASE("generate options are validated by name and value", "[generate][errors]") {
  nn::TransformerLM lm(lm_config(false, 0));
  const Tensor prompt = tokens_of({1, 2}, 1);
  auto refused = [&](nn::GenerateOptions o, const std::string& message, std::int64_t n = 2) {
    INFO(message);
    REQUIRE_THROWS_AS(lm.generate(prompt, n, o), ValueError);
    REQUIRE_THROWS_WITH(lm.generate(prompt, n, o), Contains(message));
  };
  refused(sampling(-0.5), "generate: temperature must be >= 0 and finite (0: greedy), got -0.5");
  refused(sampling(NAN), "generate: temperature must be >= 0 and finite (0: greedy), got nan");
  refused(sampling(1.0, -3), "generate: top_k must be >= 0 (0: all tokens), got -3");
  refused(sampling(1.0, 0, 0.0), "generate: top_p must be in (0, 1] (1: all tokens), got 0");
  refused(sampling(1.0, 0, 1.5), "generate: top_p must be in (0, 1] (1: all tokens), got 1.5");
  nn::GenerateOptions stop;
  stop.stop_tokens = {3, 11};
  refused(stop, "generate: stop token 11 is not in the vocabulary [0, 11)");
  stop.stop_tokens = {-1};
  refused(stop, "generate: stop token -1 is not in the vocabulary [0, 11)");
  refused({}, "generate: max_new_tokens must be >= 0, got -1", -1);
}

TEST_CASE("the cached forward is inference only: refused in grad mode", "[generate][kv_cache][errors]") {
  nn::TransformerLM lm(lm_config(true, 2));
  nn::KVCache cache = lm.make_kv_cache(1, 4);
  REQUIRE_THROWS_AS(lm.forward_cached(tokens_of({1, 2}, 1), cache), ValueError);
  REQUIRE_THROWS_WITH(lm.forward_cached(tokens_of({1, 2}, 1), cache),
                      Contains("MultiHeadAttention: the KV cache path is inference only (not differentiable); run it "
                               "under NoGradGuard"));
  // generate itself runs without grad, whatever the caller's mode
  CHECK(lm.generate(tokens_of({1}, 1), 3, sampling(0)).shape() == Shape{1, 4});
  NoGradGuard no_grad;
  nn::KVCache fresh = lm.make_kv_cache(1, 4);
  CHECK(lm.forward_cached(tokens_of({1, 2}, 1), fresh).shape() == Shape{1, 2, kVocab});
}
