// test_engine.cpp — the backward pass: accumulation, fan-out, retain_graph, freed graphs,
// no_grad, detach, graph lifetime and memory.
#include <catch2/catch.hpp>
#include <tapegrad/tapegrad.hpp>

using namespace tapegrad;
using Catch::Contains;

TEST_CASE("gradients of a small expression", "[engine]") {
  // micrograd's README expression, smaller: y = (a·b + b³) / a, a = 2, b = -3
  Tensor a = tensor({2}, {}, DType::float64).requires_grad_();
  Tensor b = tensor({-3}, {}, DType::float64).requires_grad_();
  Tensor y = (a * b + pow(b, 3.0)) / a;
  y.backward();
  CHECK(y.item() == Approx((-6 - 27) / 2.0));
  // dy/da = -b³/a² = 27/4, dy/db = (a + 3b²)/a = 1 + 27/2
  CHECK(a.grad().item() == Approx(27.0 / 4));
  CHECK(b.grad().item() == Approx(1 + 27.0 / 2));
}

TEST_CASE("fan-out adds the gradients of every use", "[engine]") {
  Tensor x = tensor({3}, {}, DType::float64).requires_grad_();
  Tensor y = x * x + x;  // dy/dx = 2x + 1
  y.backward();
  CHECK(x.grad().item() == 7);
}

TEST_CASE("gradients accumulate across backward calls until reset", "[engine]") {
  Tensor x = ones({2}, DType::float64).requires_grad_();
  (x * 2.0).sum().backward();
  (x * 3.0).sum().backward();
  CHECK(x.grad().to_vector() == std::vector<double>{5, 5});
  x.reset_grad();
  CHECK_FALSE(x.grad().defined());
  (x * 4.0).sum().backward();
  CHECK(x.grad().to_vector() == std::vector<double>{4, 4});
}

TEST_CASE("a second backward needs retain_graph", "[engine][errors]") {
  Tensor x = ones({2}, DType::float64).requires_grad_();
  Tensor y = exp(x).sum();
  y.backward(Tensor(), {.retain_graph = true});
  y.backward();
  CHECK(x.grad().to_vector()[0] == Approx(2 * std::exp(1.0)));
  REQUIRE_THROWS_AS(y.backward(), GraphError);
  REQUIRE_THROWS_WITH(y.backward(), Contains("second time") && Contains(".retain_graph = true") &&
                                        Contains("'sum'"));
}

TEST_CASE("backward of a non-scalar needs a gradient of its shape", "[engine][errors]") {
  Tensor x = ones({2, 3}).requires_grad_();
  Tensor y = x * 2.0;
  REQUIRE_THROWS_WITH(y.backward(), Contains("one-element output") && Contains("[2, 3]"));
  REQUIRE_THROWS_WITH(y.backward(ones({3})), Contains("[3]") && Contains("[2, 3]"));
  y.backward(full({2, 3}, 0.5));
  CHECK(x.grad().to_vector() == std::vector<double>(6, 1.0));
}

TEST_CASE("backward of a tensor that needs no grad is an error", "[engine][errors]") {
  Tensor x = ones({2});
  REQUIRE_THROWS_WITH((x * 2.0).sum().backward(), Contains("does not require grad"));
  REQUIRE_THROWS_AS(arange(3, DType::int64).requires_grad_(), DTypeError);
  Tensor leaf = ones({1}).requires_grad_();
  REQUIRE_THROWS_WITH((leaf * 2.0).requires_grad_(false), Contains("only leaf tensors"));
}

TEST_CASE("backward of a leaf seeds its own grad", "[engine]") {
  Tensor x = ones({}, DType::float64).requires_grad_();
  x.backward();
  CHECK(x.grad().item() == 1);
}

TEST_CASE("NoGradGuard records nothing and restores the mode", "[engine]") {
  Tensor x = ones({2}).requires_grad_();
  {
    NoGradGuard no_grad;
    Tensor y = x * 2.0;
    CHECK_FALSE(y.requires_grad());
    CHECK(y.grad_fn() == nullptr);
    {
      NoGradGuard nested;
    }
    CHECK_FALSE(is_grad_enabled());
  }
  CHECK(is_grad_enabled());
  CHECK((x * 2.0).grad_fn() != nullptr);
}

TEST_CASE("detach cuts the graph but shares the data", "[engine]") {
  Tensor x = ones({2}, DType::float64).requires_grad_();
  Tensor d = (x * 3.0).detach();
  CHECK_FALSE(d.requires_grad());
  CHECK(d.is_leaf());
  Tensor y = (x * d).sum();  // d is a constant: dy/dx = d = 3
  y.backward();
  CHECK(x.grad().to_vector() == std::vector<double>{3, 3});
}

TEST_CASE("only inputs that require grad receive gradients", "[engine]") {
  Tensor w = ones({2}, DType::float64).requires_grad_();
  Tensor c = full({2}, 4, DType::float64);
  (w * c).sum().backward();
  CHECK(w.grad().to_vector() == std::vector<double>{4, 4});
  CHECK_FALSE(c.grad().defined());
}

TEST_CASE("the graph is freed when no output refers to it", "[engine][memory]") {
  Tensor x = ones({64}).requires_grad_();
  std::weak_ptr<Node> first_node;
  {
    Tensor h = x * 2.0;
    first_node = h.grad_fn();
    Tensor y = exp(h).sum();
    CHECK_FALSE(first_node.expired());
  }
  CHECK(first_node.expired());
}

TEST_CASE("a deep chain of ops is freed without overflowing the stack", "[engine][memory]") {
  Tensor x = ones({1}).requires_grad_();
  Tensor y = x;
  for (int i = 0; i < 200000; ++i) y = y + 0.0;
  std::weak_ptr<Node> last = y.grad_fn();
  y = Tensor();
  CHECK(last.expired());
}

TEST_CASE("backward frees the saved tensors", "[engine][memory]") {
  Tensor x = ones({256, 256}).requires_grad_();
  Tensor y = exp(x * 2.0).sum();
  const std::size_t before = Storage::live_bytes();
  y.backward();
  x.reset_grad();
  // The saved output of exp (256 KiB) is gone once backward has used it.
  CHECK(Storage::live_bytes() + 256 * 256 * 4 <= before);
}

TEST_CASE("1000 forward passes without backward keep memory flat", "[engine][memory]") {
  Generator gen(0);
  Tensor w = randn({64, 64}, gen).requires_grad_();
  Tensor x = randn({8, 64}, gen);
  auto step = [&] { return tanh(matmul(x, w)).sum(); };
  (void)step();
  const std::size_t baseline = Storage::live_bytes();
  for (int i = 0; i < 1000; ++i) {
    Tensor loss = step();
    (void)loss;
  }
  CHECK(Storage::live_bytes() == baseline);
}

TEST_CASE("graph_string and to_dot show the recorded ops", "[engine][graphviz]") {
  Tensor a = tensor({2}, {}).requires_grad_();
  Tensor b = tensor({-3}, {}).requires_grad_();
  Tensor y = tanh(a * b + b);
  const std::string listing = graph_string(y);
  CHECK(listing == "#1 mul [] <- leaf [] (requires grad), leaf [] (requires grad)\n"
                   "#2 add [] <- #1 mul, leaf [] (requires grad)\n"
                   "#3 tanh [] <- #2 add\n");
  const std::string dot = to_dot(y);
  CHECK_THAT(dot, Contains("digraph") && Contains("label=\"mul\\n[]\"") && Contains("-> "));
  CHECK_THAT(dot, Contains("data [2]"));
  y.backward();
  CHECK_THAT(graph_string(y), Contains("[saved tensors freed]"));
  CHECK_THAT(to_dot(a), Contains("| grad ["));
  CHECK_THAT(graph_string(a), Contains("leaf"));
}
