// test_backward_trace.cpp — BackwardTrace (autograd/backward_trace.hpp): one step per node
// the engine runs, in its order, with the norms of the gradients that really flowed; one step
// per contribution into a leaf's .grad(); the same gradients, bit for bit, as without a trace.
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "support/tensor_diff.hpp"

#include <catch2/catch.hpp>

using namespace tapegrad;
using Catch::Matchers::Contains;
using tapegrad::testing::max_abs_diff;

namespace {

double norm(const Tensor& t) { return std::sqrt(sum(mul(t, t)).item()); }

// L = Σ (tanh(x·w) + x·w) ⊙ c: x·w feeds two users (fan-out), c needs no gradient.
struct Expression {
  Tensor x, w, c;
  Expression() {
    Generator gen(4);
    x = randn({2, 3}, gen, DType::float64).requires_grad_();
    w = randn({3}, gen, DType::float64).requires_grad_();
    c = randn({2, 3}, gen, DType::float64);
  }
  Tensor loss() const {
    const Tensor y = mul(x, w);
    return sum(mul(add(tanh(y), y), c));
  }
};

}  // namespace

TEST_CASE("BackwardTrace: a step per node in the engine's order, with the norms that flowed", "[trace]") {
  Expression e;
  const Tensor loss = e.loss();
  const std::vector<Node*> order = topological_order(loss.grad_fn().get());
  BackwardTrace trace;
  trace.name(e.x, "x");
  trace.name(e.w, "w");
  loss.backward();

  std::vector<int> node_steps;
  for (const TraceStep& step : trace.steps())
    if (step.node >= 0) node_steps.push_back(step.node);
  REQUIRE(node_steps.size() == order.size());  // every node once: sum, mul, add, tanh, mul
  REQUIRE(trace.nodes().size() == order.size());
  // the engine walks its order from the back, the output's node first
  for (std::size_t s = 0; s < node_steps.size(); ++s)
    CHECK(trace.nodes()[static_cast<std::size_t>(node_steps[s])].op == order[order.size() - 1 - s]->name);
  CHECK(trace.nodes()[static_cast<std::size_t>(node_steps.front())].op == "sum");
  // the first step receives dL/dL = 1; the inputs of a node are numbered before it
  CHECK(trace.steps().front().grad_in == 1.0);
  for (std::size_t n = 0; n < trace.nodes().size(); ++n)
    for (const TraceInput& in : trace.nodes()[n].inputs) CHECK(in.node < static_cast<int>(n));

  // the leaves: w is used once (one step, its whole .grad()), x once; the constant c has none
  REQUIRE(trace.leaves().size() == 2);
  int leaf_steps = 0;
  for (const TraceStep& step : trace.steps()) {
    if (step.leaf < 0) continue;
    ++leaf_steps;
    const Tensor& leaf = trace.leaves()[static_cast<std::size_t>(step.leaf)].name == "x" ? e.x : e.w;
    CHECK(step.grad_in == Approx(norm(leaf.grad())).epsilon(1e-14));
  }
  CHECK(leaf_steps == 2);

  // the first mul's output fans out: the norm it receives is that of the sum of both users'
  const Tensor y = mul(e.x, e.w);
  const Tensor dy = grad({sum(mul(add(tanh(y), y), e.c))}, {y})[0];
  bool seen = false;
  for (const TraceStep& step : trace.steps())
    if (step.node >= 0 && trace.nodes()[static_cast<std::size_t>(step.node)].op == "mul" &&
        trace.nodes()[static_cast<std::size_t>(step.node)].inputs[0].leaf >= 0) {
      CHECK(step.grad_in == Approx(norm(dy)).epsilon(1e-14));
      seen = true;
    }
  CHECK(seen);
}

TEST_CASE("BackwardTrace: its text names the ops, the leaves, the constants and the passes", "[trace]") {
  Expression e;
  BackwardTrace trace;
  trace.name(e.w, "w");
  const Tensor loss = e.loss();
  loss.backward({}, {.retain_graph = true});
  loss.backward();
  const std::string text = trace.text();
  INFO(text);
  CHECK(trace.passes() == 2);
  CHECK_THAT(text, Contains("backward pass 1\nstep 1  #") && Contains("sum []  dL/dout 1  ->  #"));
  CHECK_THAT(text, Contains("backward pass 2"));
  CHECK_THAT(text, Contains("leaf w [3]  .grad += "));
  CHECK_THAT(text, Contains("leaf 1 [2, 3]"));      // x, unnamed
  CHECK_THAT(text, Contains("constant [2, 3] -"));  // c: no gradient flows to it
  // the second pass repeats the first, numbered on
  CHECK(trace.steps().size() % 2 == 0);
  const std::size_t half = trace.steps().size() / 2;
  CHECK(trace.steps()[half].pass == 1);
  CHECK(trace.steps()[half].grad_in == trace.steps()[0].grad_in);
}

TEST_CASE("BackwardTrace: the gradients are bit for bit those without a trace", "[trace]") {
  // a tied embedding, whose backward adds its rows straight into the table's .grad() when no
  // trace is on (grad_to_add_into); under a trace the gradient passes the engine instead
  auto run = [](bool traced) {
    Generator gen(9);
    const Tensor W = randn({12, 4}, gen).requires_grad_();
    const Tensor tokens = Tensor::from_vector(std::vector<std::int64_t>{1, 3, 3, 11, 0, 1}, {2, 3});
    const Tensor R = randn({2, 3, 12}, gen);
    const auto pass = [&] { sum(mul(linear(embedding(W, tokens), W), R)).backward(); };
    if (traced) {
      BackwardTrace trace;
      pass();
      CHECK(trace.leaves().size() == 1);
      int leaf_steps = 0;
      for (const TraceStep& step : trace.steps()) leaf_steps += step.leaf >= 0;
      CHECK(leaf_steps == 2);  // the head's gradient and the embedding's, each added into .grad()
    } else {
      pass();
    }
    return W.grad();
  };
  CHECK(max_abs_diff(run(false), run(true)) == 0);
}

TEST_CASE("BackwardTrace: off when destroyed, and a checkpoint's recomputation is a pass inside the pass", "[trace]") {
  Expression e;
  {
    BackwardTrace trace;
  }
  CHECK(detail::active_trace() == nullptr);
  BackwardTrace trace;
  const Tensor y = checkpoint([](const TensorList& in) { return tanh(mul(in[0], in[1])); }, {e.x, e.w});
  sum(y).backward();
  CHECK(trace.passes() == 2);
  bool inner = false;
  for (const TraceStep& step : trace.steps()) inner = inner || step.pass == 1;
  CHECK(inner);
  CHECK_THAT(trace.text(), Contains("backward pass 2"));
}
