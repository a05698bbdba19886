// test_grad_add_into.cpp — a backward that adds its gradient straight into a leaf's .grad()
// (grad_to_add_into): an embedding tied with the LM head adds its token rows into the
// table's gradient that the head's backward already made, instead of a dense table of zeros
// and rows added afterwards. The gradients are bit for bit those of the dense way, the dense
// table is never made, and the engine offers the leaf only where the dense way would have
// added into it in place: not to a leaf with hooks, not under create_graph, not to grad().
#include <cstdint>
#include <vector>

#include "support/tensor_diff.hpp"

#include <catch2/catch.hpp>

using namespace tapegrad;
using tapegrad::testing::max_abs_diff;

namespace {

// A tied table W (V, C): logits = embedding(W, tokens) · Wᵀ, loss = Σ logits ⊙ R. The tokens
// repeat, so rows of the embedding's gradient add up before they reach W.
struct Tied {
  std::int64_t V, C;
  DType dtype;
  Tensor W, tokens, R;

  Tied(std::int64_t v, std::int64_t c, DType dt, std::uint64_t seed) : V(v), C(c), dtype(dt) {
    Generator gen(seed);
    W = mul(randn({V, C}, gen, dtype), 0.5).detach().requires_grad_();
    std::vector<std::int64_t> ids;
    for (std::int64_t i = 0; i < 24; ++i) ids.push_back(i % 5 == 0 ? V - 1 : (i * 7) % 9);
    tokens = Tensor::from_vector(ids, {4, 6});
    R = randn({4, 6, V}, gen, dtype);
  }

  Tensor loss() const { return sum(mul(linear(embedding(W, tokens), W), R)); }
};

// A no-op hook on the leaf: the engine then sums the pass's contributions before .grad() (the
// dense way), since hooks must see the whole gradient.
HookHandle hook_dense(const Tensor& leaf) {
  return leaf.register_hook([](const Tensor&) { return Tensor(); });
}

}  // namespace

TEST_CASE("a tied embedding adds its rows into the head's gradient: the same bits as the dense way",
          "[grad_add_into][embedding]") {
  for (const DType dtype : {DType::float32, DType::float64}) {
    Tied tied(40, 8, dtype, 3), untied(40, 8, dtype, 3);
    // The dense way, written out: the same table as two leaves, the head's and the
    // embedding's gradients taken apart by grad() (which never adds into .grad()), then added
    // in the engine's order: .grad() += the head's, then += the embedding's dense table.
    const Tensor We = untied.W.detach().clone().requires_grad_();
    Tensor expected;
    for (int pass = 0; pass < 3; ++pass) {  // the later passes add into what .grad() holds
      tied.loss().backward();
      const TensorList g = grad({sum(mul(linear(embedding(We, untied.tokens), untied.W), untied.R))}, {untied.W, We});
      expected = expected.defined() ? add(add(expected, g[0]), g[1]) : add(g[0], g[1]);
      INFO("pass " << pass << ", " << dtype_name(dtype));
      CHECK(max_abs_diff(tied.W.grad(), expected) == 0);
    }
  }
}

TEST_CASE("a tied embedding's backward makes no dense table", "[grad_add_into][embedding][memory]") {
  // float64 (V, C) = 2000 x 64: 1 MB, more than anything else the backward makes here (the
  // logits' gradient is 24 x 2000 doubles, 384 KB).
  const std::int64_t table_bytes = 2000 * 64 * 8;
  auto backward_peak = [&](bool hooked) {
    Tied t(2000, 64, DType::float64, 5);
    HookHandle h;
    if (hooked) h = hook_dense(t.W);
    const Tensor loss = t.loss();
    const std::int64_t before = static_cast<std::int64_t>(Storage::live_bytes());
    Storage::reset_peak_live_bytes();
    loss.backward();
    return static_cast<std::int64_t>(Storage::peak_live_bytes()) - before;
  };
  const std::int64_t direct = backward_peak(false), dense = backward_peak(true);
  INFO("backward peak over the forward's live bytes: direct " << direct << ", dense " << dense);
  CHECK(direct < 2 * table_bytes);  // never the table's gradient and a dense table at once
  CHECK(dense - direct >= table_bytes);
}

TEST_CASE("the engine offers a leaf's gradient only where it would add into it in place",
          "[grad_add_into][embedding]") {
  SECTION("an untied embedding: its first gradient is adopted, the next added into it") {
    Generator gen(7);
    const Tensor W = randn({30, 4}, gen, DType::float64).requires_grad_();
    const Tensor W2 = W.detach().clone().requires_grad_();
    const Tensor tokens = Tensor::from_vector(std::vector<std::int64_t>{3, 1, 3, 29, 3, 0}, {6});
    const Tensor R = randn({6, 4}, gen, DType::float64);
    HookHandle h = hook_dense(W2);
    for (int pass = 0; pass < 2; ++pass) {
      sum(mul(embedding(W, tokens), R)).backward();
      sum(mul(embedding(W2, tokens), R)).backward();
      CHECK(max_abs_diff(W.grad(), W2.grad()) == 0);
    }
  }
  SECTION("index_select along an inner dim, into a gradient already there") {
    Generator gen(9);
    const Tensor x = randn({3, 10, 5}, gen, DType::float32).requires_grad_();
    const Tensor x2 = x.detach().clone().requires_grad_();
    const Tensor idx = Tensor::from_vector(std::vector<std::int64_t>{4, 4, 9, 0, 4}, {5});
    const Tensor R = randn({3, 5, 5}, gen, DType::float32);
    HookHandle h = hook_dense(x2);
    for (const Tensor& t : {x, x2}) {
      sum(mul(t, t)).backward();  // .grad() = 2x first
      sum(mul(index_select(t, 1, idx), R)).backward();
    }
    CHECK(max_abs_diff(x.grad(), x2.grad()) == 0);
  }
  SECTION("create_graph: the gradient keeps its graph, and is the same") {
    Tied direct(20, 4, DType::float64, 11), recorded(20, 4, DType::float64, 11);
    direct.loss().backward();
    recorded.loss().backward({}, {.create_graph = true});
    CHECK(recorded.W.grad().requires_grad());
    CHECK(max_abs_diff(direct.W.grad(), recorded.W.grad()) == 0);
    // .grad() now holds a graph that holds W: a reference cycle (PyTorch warns of the same
    // with backward(create_graph=True)). Break it, or LeakSanitizer reports the graph.
    recorded.W.reset_grad();
  }
  SECTION("grad(): the whole gradient is returned, and .grad() is left alone") {
    Tied t(20, 4, DType::float64, 13), reference(20, 4, DType::float64, 13);
    const Tensor before = ones({20, 4}, DType::float64);
    t.W.impl().grad = before.clone().impl_ptr();
    const TensorList g = grad({t.loss()}, {t.W});
    reference.loss().backward();
    CHECK(max_abs_diff(g[0], reference.W.grad()) == 0);
    CHECK(max_abs_diff(t.W.grad(), before) == 0);
  }
  SECTION("anomaly mode checks every gradient, so it gets the dense way, with the same bits") {
    Tied direct(20, 4, DType::float32, 15), checked(20, 4, DType::float32, 15);
    direct.loss().backward();
    {
      AnomalyModeGuard anomaly;
      checked.loss().backward();
    }
    CHECK(max_abs_diff(direct.W.grad(), checked.W.grad()) == 0);
  }
}

TEST_CASE("grad_to_add_into outside a backward function is undefined", "[grad_add_into]") {
  CHECK_FALSE(grad_to_add_into(0).defined());
}
