// test_hooks.cpp — tensor hooks (autograd/hooks.hpp): what a gradient hook sees and what its
// replacement changes, on non-leaves and on leaves (the pass's whole gradient, fan-out
// included); post-accumulate-grad hooks run once, when .grad() is final, before the leaves
// further down get theirs; order, removal, a node that sends nothing, retain_graph; errors.
#include <catch2/catch.hpp>
#include <tapegrad/tapegrad.hpp>

#include "support/gradcheck_catch.hpp"

using namespace tapegrad;
using Catch::Contains;

namespace {
constexpr DType f64 = DType::float64;
std::vector<double> values(const Tensor& t) { return t.to_vector(); }
}  // namespace

TEST_CASE("hooks: a non-leaf's hook sees its gradient and may replace it", "[hooks]") {
  Tensor x = tensor({1, 2, 3}, {3}, f64).requires_grad_();
  Tensor y = x * x;  // dL/dy = 1 for L = Σy
  std::vector<double> seen;
  y.register_hook([&](const Tensor& g) {
    seen = values(g);
    return Tensor();  // keep it
  });
  sum(y).backward();
  CHECK(seen == std::vector<double>{1, 1, 1});
  CHECK(values(x.grad()) == std::vector<double>{2, 4, 6});
  // a replacement flows on: dL/dx = 2x · 3
  x.reset_grad();
  Tensor y2 = x * x;
  y2.register_hook([](const Tensor& g) { return g * 3.0; });
  sum(y2).backward();
  CHECK(values(x.grad()) == std::vector<double>{6, 12, 18});
}

TEST_CASE("hooks: a leaf's hook sees the whole gradient of the pass, fan-out summed", "[hooks]") {
  Tensor x = tensor({1, 2}, {2}, f64).requires_grad_();
  int calls = 0;
  std::vector<double> seen;
  x.register_hook([&](const Tensor& g) {
    ++calls;
    seen = values(g);
    return g * 10.0;
  });
  sum(x * 2.0 + x * x).backward();  // two contributions: 2 and 2x
  CHECK(calls == 1);
  CHECK(seen == std::vector<double>{4, 6});
  CHECK(values(x.grad()) == std::vector<double>{40, 60});  // what .grad() gets is the hook's result
  // a second pass adds to .grad() as usual, its hook seeing only this pass's gradient
  sum(x * 2.0).backward();
  CHECK(seen == std::vector<double>{2, 2});
  CHECK(values(x.grad()) == std::vector<double>{60, 80});
  // a leaf that is the root of backward
  Tensor s = scalar_tensor(3.0, f64).requires_grad_();
  s.register_hook([](const Tensor& g) { return g * 5.0; });
  s.backward();
  CHECK(s.grad().item() == 5.0);
}

TEST_CASE("hooks: post-accumulate-grad hooks run once .grad() is final, as early as it is", "[hooks]") {
  manual_seed(1);
  Tensor x = randn({2, 3}, f64);
  Tensor w1 = randn({3, 4}, f64).requires_grad_(), w2 = randn({4, 1}, f64).requires_grad_();
  std::vector<std::string> events;
  w2.register_post_accumulate_grad_hook([&](Tensor& w) {
    events.push_back("w2");
    CHECK(w.grad().defined());
    CHECK(!w1.grad().defined());  // w1, further down, has not got its gradient yet
  });
  w1.register_post_accumulate_grad_hook([&](Tensor& w) {
    events.push_back("w1");
    CHECK(w.grad().shape() == Shape{3, 4});
  });
  Tensor h = matmul(x, w1);
  sum(matmul(h, w2) + matmul(h, w2)).backward();  // w2 used twice: its hook waits for both
  CHECK(events == std::vector<std::string>{"w2", "w1"});
  // its .grad() is the sum of both uses when the hook runs
  const Tensor expected = matmul(h.detach().transpose(0, 1), ones({2, 1}, f64)) * 2.0;
  CHECK(values(w2.grad()) == values(expected));
}

TEST_CASE("hooks: order, removal, and a node that sends nothing", "[hooks]") {
  Tensor x = tensor({1, 2}, {2}, f64).requires_grad_();
  std::vector<int> order;
  HookHandle first = x.register_hook([&](const Tensor& g) {
    order.push_back(1);
    return g + 1.0;
  });
  std::vector<double> second_saw;
  HookHandle second = x.register_hook([&](const Tensor& g) {
    order.push_back(2);
    second_saw = values(g);
    return Tensor();
  });
  sum(x).backward();
  CHECK(order == std::vector<int>{1, 2});
  CHECK(second_saw == std::vector<double>{2, 2});  // the first one's replacement
  first.remove();
  first.remove();  // idempotent
  order.clear();
  x.reset_grad();
  sum(x).backward();
  CHECK(order == std::vector<int>{2});
  CHECK(values(x.grad()) == std::vector<double>{1, 1});
  second.remove();
  {
    Tensor gone = tensor({1}, {1}, f64).requires_grad_();
    second = gone.register_hook([](const Tensor&) { return Tensor(); });
  }
  second.remove();  // the tensor is gone: nothing to do

  // A node whose backward sends nothing to x: x's hooks see only the other path
  Tensor blocked = tensor({0, 0}, {2}, f64);
  record(blocked, "send_nothing", {x}, [](const Tensor&) -> TensorList { return {Tensor()}; });
  int calls = 0;
  Tensor seen;
  x.register_hook([&](const Tensor& g) {
    ++calls;
    seen = g;
    return Tensor();
  });
  int post_calls = 0;
  x.register_post_accumulate_grad_hook([&](Tensor&) { ++post_calls; });
  x.reset_grad();
  sum(blocked + x * 3.0).backward();
  CHECK(calls == 1);
  CHECK(values(seen) == std::vector<double>{3, 3});
  CHECK(post_calls == 1);
  // and none at all: no hook runs, no .grad()
  Tensor only_blocked = tensor({0, 0}, {2}, f64);
  record(only_blocked, "send_nothing", {x}, [](const Tensor&) -> TensorList { return {Tensor()}; });
  x.reset_grad();
  sum(only_blocked).backward();
  CHECK(calls == 1);
  CHECK(post_calls == 1);
  CHECK(!x.grad().defined());
}

TEST_CASE("hooks: retain_graph runs a non-leaf's hooks in every backward", "[hooks]") {
  Tensor x = tensor({1, 2}, {2}, f64).requires_grad_();
  Tensor y = x * x;
  int calls = 0;
  y.register_hook([&](const Tensor&) {
    ++calls;
    return Tensor();
  });
  Tensor loss = sum(y);
  loss.backward(Tensor(), {.retain_graph = true});
  loss.backward();
  CHECK(calls == 2);
  CHECK(values(x.grad()) == std::vector<double>{4, 8});
}

TEST_CASE("hooks: errors name the hook, the tensor and both shapes", "[hooks][errors]") {
  Tensor x = tensor({1, 2, 3}, {3}, f64).requires_grad_();
  Tensor y = x * 2.0;
  y.register_hook([](const Tensor&) { return zeros({2}, DType::float64); }, "bad shape");
  REQUIRE_THROWS_AS(sum(y).backward(), GraphError);
  Tensor y2 = x * 2.0;
  y2.register_hook([](const Tensor&) { return zeros({2}, DType::float64); }, "bad shape");
  REQUIRE_THROWS_WITH(sum(y2).backward(),
                      Contains("hook 'bad shape' on the gradient of the output of 'mul' [3] (float64) returned a gradient "
                               "of shape [2] (float64) for a tensor of shape [3] (float64)"));
  Tensor y3 = x * 2.0;
  y3.register_hook([](const Tensor& g) { return g.to(DType::float32); });
  REQUIRE_THROWS_WITH(sum(y3).backward(), Contains("hook 1 on the gradient of the output of 'mul'") &&
                                              Contains("(float32) for a tensor of shape [3] (float64)"));
  Tensor leaf = tensor({1, 2}, {2}, f64).requires_grad_();
  leaf.register_hook([](const Tensor&) -> Tensor { throw ValueError("no thanks"); });
  REQUIRE_THROWS_WITH(sum(leaf * 1.0).backward(), Contains("hook 1 on the gradient of a leaf [2] (float64) threw: no thanks"));
  Tensor leaf2 = tensor({1, 2}, {2}, f64).requires_grad_();
  leaf2.register_post_accumulate_grad_hook([](Tensor&) { throw ValueError("late"); }, "reducer");
  REQUIRE_THROWS_WITH(sum(leaf2 * 1.0).backward(),
                      Contains("post-accumulate-grad hook 'reducer' on a leaf [2] (float64) threw: late"));
  Tensor constant = tensor({1, 2}, {2}, f64);
  REQUIRE_THROWS_WITH(constant.register_hook([](const Tensor&) { return Tensor(); }), Contains("does not require grad"));
  REQUIRE_THROWS_WITH(y.register_post_accumulate_grad_hook([](Tensor&) {}),
                      Contains("only leaves that require grad accumulate a .grad(); this tensor of shape [3] is the output of 'mul'"));
}
