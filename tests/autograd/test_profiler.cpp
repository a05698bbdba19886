// test_profiler.cpp — the per-op profile: forward and backward rows per op kind, GEMM share,
// optimizer scopes, and the docs/performance.md example.
#include <iostream>
#include <sstream>

#include <catch2/catch.hpp>
#include <tapegrad/autograd/profiler.hpp>
#include <tapegrad/tapegrad.hpp>

#include "support/docs.hpp"

using namespace tapegrad;

TEST_CASE("profiler: docs/performance.md example, times per op kind and phase", "[profiler][docs]") {
  manual_seed(0);
  const std::int64_t V = 32;
  nn::TransformerLMConfig c;
  c.vocab_size = V;
  c.max_seq_len = 16;
  c.n_layers = 2;
  c.block.d_model = 32;
  c.block.n_heads = 2;
  nn::TransformerLM model(c);
  optim::AdamW opt(model.named_parameters(), optim::AdamOptions(1e-3));
  Generator gen(1);
  const Tensor inputs = randint(0, V, {4, 16}, gen), targets = randint(0, V, {4, 16}, gen);

  std::ostringstream captured;
  std::streambuf* old = std::cout.rdbuf(captured.rdbuf());
#include "../../docs/snippets/profile.inc"
  std::cout.rdbuf(old);

  const auto linear_forward = prof.ops.at({"linear", profiler::Phase::forward});
  const auto linear_backward = prof.ops.at({"linear", profiler::Phase::backward});
  // 2 layers x (qkv, out_proj) + the tied head, per step; each layer's fc1, GELU and fc2 run
  // as one gelu_mlp
  CHECK(linear_forward.calls == 3 * 5);
  CHECK(linear_backward.calls == 3 * 5);
  CHECK(prof.ops.at({"gelu_mlp", profiler::Phase::forward}).calls == 3 * 2);
  CHECK(linear_forward.gemm_seconds > 0);
  CHECK(linear_forward.gemm_seconds <= linear_forward.seconds);
  CHECK(prof.ops.at({"optimizer.step", profiler::Phase::other}).calls == 3);
  CHECK(prof.ops.count({"self_attention_packed", profiler::Phase::backward}) == 1);
  double sum = 0;
  for (const auto& [_, t] : prof.ops) sum += t.seconds;
  CHECK(sum <= prof.total_seconds * 1.001);
  const std::string report = captured.str();
  CHECK(report.find("linear") != std::string::npos);
  CHECK(report.find("total                        backward") != std::string::npos);

  // Off when no guard lives: nothing more is recorded.
  const auto calls = prof.ops.at({"linear", profiler::Phase::forward}).calls;
  model.forward(inputs);
  CHECK(prof.ops.at({"linear", profiler::Phase::forward}).calls == calls);
  CHECK_FALSE(profiler::enabled());
}

TEST_CASE("profiler: docs/performance.md shows the snippet", "[profiler][docs]") {
  using namespace tapegrad::testing;
  const auto blocks = cpp_blocks(read_text(kDocsDir + "/performance.md"));
  REQUIRE(!blocks.empty());
  CHECK(blocks[0] == read_text(kDocsDir + "/snippets/profile.inc"));
}
