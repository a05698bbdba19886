// test_transformer.cpp — TransformerLM and Seq2SeqTransformer: GPT-2-small parameter count,
// parameter names in order, shapes, causality, a short training run, generate() (greedy,
// cropping, top-k, seeded sampling), conditional models, error messages.
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "nn/nn_helpers.hpp"

using namespace tapegrad;
using Catch::Contains;
using nn::NormKind;
using nn::Placement;
using tapegrad::testing::max_abs_diff;
using tapegrad::testing::randomize_;
using tapegrad::testing::std_of;
using tapegrad::testing::argmax_row;
using tapegrad::testing::tiny_lm;
using tapegrad::testing::tiny_seq2seq;
using tapegrad::testing::tokens_of;

namespace {

std::vector<std::string> names_of(const nn::Module& m) {
  std::vector<std::string> out;
  for (const auto& [n, _] : m.named_parameters()) out.push_back(n);
  return out;
}

// Greedy decoding written out: at each step, the argmax of the logits of the last position
// (the window is never cropped: generate() refuses to go past max_seq_len).
std::vector<std::int64_t> manual_greedy(nn::TransformerLM& lm, std::vector<std::int64_t> seq, std::int64_t n) {
  NoGradGuard no_grad;
  const std::int64_t V = lm.config.vocab_size;
  for (std::int64_t step = 0; step < n; ++step) {
    const std::vector<double> logits = lm.forward(tokens_of(seq, 1)).to_vector();
    seq.push_back(argmax_row(logits, static_cast<std::int64_t>(seq.size()) - 1, V));
  }
  return seq;
}

}  // namespace

TEST_CASE("A GPT-2-small shaped TransformerLM has 124,439,808 parameters", "[transformer][lm]") {
  nn::TransformerLMConfig c;
  c.vocab_size = 50257;
  c.max_seq_len = 1024;
  c.n_layers = 12;
  c.block.d_model = 768;
  c.block.n_heads = 12;
  c.tie_weights = true;
  // the count does not depend on the init; the modules' own defaults are the cheapest to draw
  c.init = nn::InitScheme::pytorch;
  {
    nn::TransformerLM gpt2(c);
    CHECK(gpt2.num_parameters() == 124439808);
    CHECK(gpt2.lm_head == nullptr);
  }
  // untying adds the (V, C) head; checked on a stack without blocks, which the head does not touch
  c.n_layers = 0;
  c.max_seq_len = 1;
  nn::TransformerLM tied(c);
  c.tie_weights = false;
  nn::TransformerLM untied(c);
  REQUIRE(untied.lm_head != nullptr);
  CHECK(untied.lm_head->weight.shape() == Shape{50257, 768});
  CHECK(untied.num_parameters() - tied.num_parameters() == 50257 * 768);
}

TEST_CASE("TransformerLM parameter names, in registration order", "[transformer][lm]") {
  nn::TransformerLM lm(tiny_lm());
  std::vector<std::string> expected{"tok_emb.weight", "pos_emb.weight"};
  for (const char* l : {"0", "1"})
    for (const char* n : {"attn.qkv.weight", "attn.qkv.bias", "attn.out_proj.weight", "attn.out_proj.bias",
                          "ffn.fc1.weight", "ffn.fc1.bias", "ffn.fc2.weight", "ffn.fc2.bias",
                          "attn_residual.norm.weight", "attn_residual.norm.bias", "ffn_residual.norm.weight",
                          "ffn_residual.norm.bias"})
      expected.push_back(std::string("blocks.") + l + "." + n);
  expected.push_back("final_norm.weight");
  expected.push_back("final_norm.bias");
  CHECK(names_of(lm) == expected);
  CHECK(lm.tok_emb->weight.shape() == Shape{8, 16});
  CHECK(lm.blocks->at<nn::TransformerBlock>(1)->attn->qkv->weight.shape() == Shape{48, 16});

  nn::TransformerLMConfig c = tiny_lm();
  c.tie_weights = false;
  c.n_classes = 3;
  c.block.norm = NormKind::adaln;
  nn::TransformerLM conditional(c);
  const auto names = names_of(conditional);
  CHECK(names[2] == "cond_emb.weight");
  CHECK(conditional.cond_emb->weight.shape() == Shape{3, 16});  // cond_dim defaults to d_model
  CHECK(names.back() == "lm_head.weight");
  CHECK(std::find(names.begin(), names.end(), "blocks.0.attn_residual.norm.modulation.weight") != names.end());
}

TEST_CASE("TransformerLM forward: shapes, causality, determinism", "[transformer][lm]") {
  manual_seed(3);
  nn::TransformerLM lm(tiny_lm(11, 8));
  const std::vector<std::int64_t> ids{1, 5, 2, 7, 3, 0, 4, 6, 10, 9};
  const Tensor tokens = tokens_of(ids, 2);  // (2, 5)
  const Tensor logits = lm.forward(tokens);
  CHECK(logits.shape() == Shape{2, 5, 11});
  CHECK(lm.forward(tokens).to_vector() == logits.to_vector());  // no dropout: deterministic
  CHECK(lm.forward(tokens_of({1, 5, 2}, 1)).shape() == Shape{1, 3, 11});

  for (std::int64_t t : {1, 3}) {  // changing token t changes no logit before t
    INFO("changed token " << t);
    std::vector<std::int64_t> changed = ids;
    changed[t] = (changed[t] + 1) % 11;
    const Tensor other = lm.forward(tokens_of(changed, 2));
    CHECK_CLOSE(narrow(other, 1, 0, t), narrow(logits, 1, 0, t), 0.0);
    CHECK(max_abs_diff(narrow(other, 1, t, 1), narrow(logits, 1, t, 1)) > 1e-6);
    CHECK_CLOSE(narrow(other, 0, 1, 1), narrow(logits, 0, 1, 1), 0.0);  // batch 1 untouched
  }
  // tied head: logits = final_norm(h)·Eᵀ; forward hooks keep each block's output
  nn::OutputRecorder outputs(*lm.blocks);
  const Tensor again = lm.forward(tokens);
  REQUIRE(outputs.outputs().size() == 2);
  const Tensor h = lm.final_norm->forward(outputs.outputs().back(), Tensor());
  CHECK_CLOSE(again, matmul(h, lm.tok_emb->weight.transpose(0, 1)), 1e-5);
}

TEST_CASE("A tiny TransformerLM learns a repeating sequence with plain SGD", "[transformer][lm][train]") {
  manual_seed(4);
  const std::int64_t V = 8;
  nn::TransformerLM lm(tiny_lm(V, 16, 2));
  std::vector<std::int64_t> input, target;
  for (std::int64_t b = 0; b < 2; ++b)
    for (std::int64_t t = 0; t < 12; ++t) {
      input.push_back((b * 3 + t) % V);  // 0 1 2 ... 7 0 1 ..., row 1 shifted by 3
      target.push_back((b * 3 + t + 1) % V);
    }
  const Tensor x = tokens_of(input, 2), y = tokens_of(target, 2);
  auto loss_of = [&] { return cross_entropy(lm.forward(x).reshape({24, V}), y.reshape({24})); };
  const double lr = 0.3;
  const double first = loss_of().item();
  double last = first;
  for (int step = 0; step < 60; ++step) {
    lm.zero_grad();
    const Tensor loss = loss_of();
    last = loss.item();
    loss.backward();
    for (const Tensor& p : lm.parameters()) {  // p -= lr · grad
      float* w = p.data<float>();
      const std::vector<float> g = p.grad().to_vector<float>();
      for (std::size_t i = 0; i < g.size(); ++i) w[i] -= static_cast<float>(lr) * g[i];
    }
  }
  last = loss_of().item();
  INFO("loss " << first << " -> " << last);
  CHECK(first == Approx(std::log(double(V))).epsilon(0.05));
  CHECK(last < 0.1 * std::log(double(V)));
}

TEST_CASE("TransformerLM generate: prompt kept, greedy, top-k and seeded sampling, max_seq_len",
          "[transformer][lm][generate]") {
  manual_seed(5);
  nn::TransformerLMConfig c = tiny_lm(8, 21);
  c.init = nn::InitScheme::pytorch;  // larger weights than gpt2: the logits are far from uniform
  nn::TransformerLM lm(c);
  nn::GenerateOptions greedy;
  greedy.temperature = 0;

  const std::vector<std::int64_t> prompt{3, 1, 4};
  const Tensor out = lm.generate(tokens_of(prompt, 1), 5, greedy);
  REQUIRE(out.shape() == Shape{1, 8});
  CHECK(out.dtype() == DType::int64);
  const std::vector<std::int64_t> seq = out.to_vector<std::int64_t>();
  CHECK(std::vector<std::int64_t>(seq.begin(), seq.begin() + 3) == prompt);
  // greedy = argmax at each step; deterministic
  CHECK(seq == manual_greedy(lm, prompt, 5));
  CHECK(lm.generate(tokens_of(prompt, 1), 5, greedy).to_vector<std::int64_t>() == seq);
  // a 1-d prompt, and a longer prompt that ends at max_seq_len
  CHECK(lm.generate(Tensor::from_vector(prompt, {3}), 5, greedy).to_vector<std::int64_t>() == seq);
  const std::vector<std::int64_t> long_prompt{1, 2, 3, 4, 5, 6, 0, 1, 2, 3, 4, 5, 6, 7, 0, 1, 2, 3};
  CHECK(lm.generate(tokens_of(long_prompt, 1), 3, greedy).to_vector<std::int64_t>() ==
        manual_greedy(lm, long_prompt, 3));
  // learned positions end at max_seq_len (21): one more token is refused, naming both lengths
  REQUIRE_THROWS_AS(lm.generate(tokens_of(long_prompt, 1), 4, greedy), ValueError);
  REQUIRE_THROWS_WITH(lm.generate(tokens_of(long_prompt, 1), 4, greedy),
                      Contains("make 22 tokens, past max_seq_len 21 of this model's learned positions"));
  CHECK(lm.generate(tokens_of(prompt, 1), 0, greedy).to_vector<std::int64_t>() == prompt);
  // with sliding_window it goes on, each token past the positions predicted from the last 21
  // tokens alone (nanoGPT's crop), a prompt longer than the window cropped the same way
  nn::GenerateOptions sliding = greedy;
  sliding.sliding_window = true;
  const auto windowed_greedy = [&](std::vector<std::int64_t> s, std::int64_t n) {
    NoGradGuard no_grad;
    for (std::int64_t step = 0; step < n; ++step) {
      const std::int64_t from = std::max<std::int64_t>(0, static_cast<std::int64_t>(s.size()) - 21);
      const std::vector<std::int64_t> window(s.begin() + from, s.end());
      const std::vector<double> logits = lm.forward(tokens_of(window, 1)).to_vector();
      s.push_back(argmax_row(logits, static_cast<std::int64_t>(window.size()) - 1, lm.config.vocab_size));
    }
    return s;
  };
  CHECK(lm.generate(tokens_of(long_prompt, 1), 10, sliding).to_vector<std::int64_t>() == windowed_greedy(long_prompt, 10));
  std::vector<std::int64_t> longer = long_prompt;
  longer.insert(longer.end(), {6, 5, 4, 3, 2, 1});  // 24 tokens, past the 21 positions already
  CHECK(lm.generate(tokens_of(longer, 1), 4, sliding).to_vector<std::int64_t>() == windowed_greedy(longer, 4));

  // top_k = 1 samples the argmax whatever the temperature
  nn::GenerateOptions top1;
  top1.top_k = 1;
  top1.temperature = 2.0;
  CHECK(lm.generate(tokens_of(prompt, 1), 5, top1).to_vector<std::int64_t>() == seq);

  // a batch of prompts: each row as if alone
  const Tensor batch = lm.generate(tokens_of({3, 1, 4, 0, 7, 7}, 2), 4, greedy);
  REQUIRE(batch.shape() == Shape{2, 7});
  const std::vector<std::int64_t> rows = batch.to_vector<std::int64_t>();
  CHECK(std::vector<std::int64_t>(rows.begin(), rows.begin() + 7) == manual_greedy(lm, {3, 1, 4}, 4));
  CHECK(std::vector<std::int64_t>(rows.begin() + 7, rows.end()) == manual_greedy(lm, {0, 7, 7}, 4));

  // sampling: the same seed gives the same tokens, another seed others
  auto sample = [&](std::uint64_t seed, std::int64_t top_k) {
    Generator gen(seed);
    nn::GenerateOptions o;
    o.temperature = 4.0;  // flat enough that the second choice comes up
    o.top_k = top_k;
    o.gen = &gen;
    return lm.generate(tokens_of({2}, 1), 20, o).to_vector<std::int64_t>();
  };
  CHECK(sample(11, 0) == sample(11, 0));
  CHECK(sample(11, 0) != sample(12, 0));
  // with top_k = 2 every sampled token is one of the two largest logits of its step
  const std::vector<std::int64_t> s = sample(13, 2);
  std::int64_t not_argmax = 0;
  for (std::int64_t t = 1; t < static_cast<std::int64_t>(s.size()); ++t) {
    const std::vector<std::int64_t> window(s.begin(), s.begin() + t);
    NoGradGuard no_grad;
    const std::vector<double> logits = narrow(lm.forward(tokens_of(window, 1)), 1, t - 1, 1).to_vector();
    std::vector<double> sorted = logits;
    std::sort(sorted.begin(), sorted.end(), std::greater<>());
    INFO("step " << t);
    CHECK(logits[s[t]] >= sorted[1]);
    not_argmax += logits[s[t]] < sorted[0];
  }
  CHECK(not_argmax > 0);  // it did sample, not always the argmax

  // generate runs in eval mode and restores the mode
  lm.train();
  lm.generate(tokens_of(prompt, 1), 1, greedy);
  CHECK(lm.is_training());
  lm.eval();
  lm.generate(tokens_of(prompt, 1), 1, greedy);
  CHECK_FALSE(lm.is_training());
  nn::GenerateOptions negative;
  negative.temperature = -1.0;
  REQUIRE_THROWS_WITH(lm.generate(tokens_of(prompt, 1), 1, negative),
                      Contains("generate: temperature must be >= 0"));
}

// generate() converts the prompt with to_vector<int64_t>(), so a float prompt is truncated
// silently although its own message says "prompt must be int64" (forward() rejects it).
TEST_CASE("TransformerLM generate rejects a prompt that is not int64", "[transformer][lm][generate]") {
  nn::TransformerLM lm(tiny_lm(8, 6));
  REQUIRE_THROWS_AS(lm.generate(tensor({1.7, 2.2}, {1, 2}), 1), ShapeError);
  REQUIRE_THROWS_WITH(lm.generate(tensor({1.7, 2.2}, {1, 2}), 1), Contains("generate: prompt must be int64"));
}

TEST_CASE("Conditional TransformerLM: classes drive the AdaLN norms", "[transformer][lm][adaln]") {
  for (NormKind norm : {NormKind::adaln_zero, NormKind::adaln}) {
    INFO(nn::norm_kind_name(norm));
    manual_seed(6);
    nn::TransformerLMConfig c = tiny_lm(8, 8, 2);
    c.n_classes = 3;
    c.block.norm = norm;
    nn::TransformerLM lm(c);
    const Tensor tokens = tokens_of({1, 2, 3, 4, 5, 6}, 2);
    REQUIRE_THROWS_AS(lm.forward(tokens), ShapeError);
    REQUIRE_THROWS_WITH(lm.forward(tokens),
                        Contains("TransformerLM: this conditional model needs classes as int64 (B = 2), got none"));
    REQUIRE_THROWS_WITH(lm.forward(tokens, tensor({0, 1, 2}, {3}, DType::int64)), Contains("got [3]"));
    const Tensor c01 = tensor({0, 1}, {2}, DType::int64), c21 = tensor({2, 1}, {2}, DType::int64);
    CHECK(lm.forward(tokens, c01).shape() == Shape{2, 3, 8});
    if (norm == NormKind::adaln_zero)  // every modulation starts at zero: the class has no effect yet
      CHECK_CLOSE(lm.forward(tokens, c01), lm.forward(tokens, c21), 0.0);
    std::uint64_t seed = 60;
    for (const auto& [name, p] : lm.named_parameters())
      if (name.find("modulation") != std::string::npos) randomize_(p, seed++, 0.3);
    const Tensor a = lm.forward(tokens, c01), b = lm.forward(tokens, c21);
    CHECK(max_abs_diff(narrow(a, 0, 0, 1), narrow(b, 0, 0, 1)) > 1e-4);  // class 0 vs 2
    CHECK_CLOSE(narrow(a, 0, 1, 1), narrow(b, 0, 1, 1), 0.0);           // class 1 in both
    // generate passes the classes along
    nn::GenerateOptions greedy;
    greedy.temperature = 0;
    CHECK(lm.generate(tokens, 2, greedy, c01).shape() == Shape{2, 5});
  }
}

TEST_CASE("TransformerLM and Seq2Seq reject bad inputs and configurations", "[transformer][errors]") {
  nn::TransformerLM lm(tiny_lm(8, 8, 1));
  REQUIRE_THROWS_AS(lm.forward(tensor({1, 2, 3}, {1, 3})), ShapeError);
  REQUIRE_THROWS_WITH(lm.forward(tensor({1, 2, 3}, {1, 3})),
                      Contains("TransformerLM: tokens must be int64 (B, T), got float32 [1, 3]"));
  REQUIRE_THROWS_WITH(lm.forward(tensor({1, 2, 3}, {3}, DType::int64)), Contains("got int64 [3]"));
  REQUIRE_THROWS_WITH(lm.forward(zeros({1, 9}, DType::int64)),
                      Contains("TransformerLM: sequence length 9 must be in 1..8 (max_seq_len)"));

  nn::TransformerLMConfig c = tiny_lm();
  c.block.norm = NormKind::adaln;
  REQUIRE_THROWS_AS(nn::TransformerLM(c), ValueError);
  REQUIRE_THROWS_WITH(nn::TransformerLM(c), Contains("TransformerLMConfig: norm adaln needs n_classes > 0"));
  c.n_classes = 3;
  c.block.norm = NormKind::adaln_zero;
  c.block.placement = Placement::post;
  REQUIRE_THROWS_WITH(nn::TransformerLM(c),
                      Contains("adaln_zero is a pre-norm design (DiT); placement must be pre, got post"));
  c = tiny_lm();
  c.vocab_size = 0;
  REQUIRE_THROWS_WITH(nn::TransformerLM(c),
                      Contains("TransformerLMConfig: vocab_size and max_seq_len must be positive"));

  nn::Seq2SeqConfig s = tiny_seq2seq(1, 1);
  s.block.norm = NormKind::adaln;
  s.block.cond_dim = 4;
  REQUIRE_THROWS_WITH(nn::Seq2SeqTransformer(s), Contains("Seq2SeqConfig: adaln norms need a condition"));
  s.block.norm = NormKind::layernorm;
  nn::Seq2SeqTransformer model(s);
  REQUIRE_THROWS_WITH(model.encode(zeros({2, 3})),
                      Contains("Seq2SeqTransformer: src must be int64 (B, T), got [2, 3]"));
  REQUIRE_THROWS_WITH(model.forward(zeros({2, 3}, DType::int64), zeros({2, 9}, DType::int64)),
                      Contains("Seq2SeqTransformer: tgt length 9 must be in 1..8"));
}
