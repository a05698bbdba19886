// The properties exercise 2 is graded on (tag [learn.02]): fan-out adds up, a leaf's .grad()
// accumulates across passes, a pass frees the graph unless retain_graph, and a freed graph is
// refused; then whole expressions against tapegrad's engine.
#include <stdexcept>

#include "grading/grading.hpp"
#include "scalar/value.hpp"

using learn::Value;
using learn::grading::close;
using learn::grading::num;

TEST_CASE("a value used by two ops gets the sum: L = a * b + b, dL/db = a + 1", "[learn.02]") {
  Value a = 2, b = -3;
  learn::backward(a * b + b);
  LEARN_CHECK(close("b is used twice in L = a * b + b, with a = 2: dL/db", b.grad(), 3) +
              (b.grad() == 3 ? "" : " (a from a * b, plus 1 from + b: the two uses add up)"));
  LEARN_CHECK(close("dL/da", a.grad(), -3));
}

TEST_CASE("a value used twice by one op gets the sum: L = a * a, dL/da = 2a", "[learn.02]") {
  Value a = 3;
  learn::backward(a * a);
  LEARN_CHECK(close("a is used twice in L = a * a, with a = 3: dL/da", a.grad(), 6) +
              (a.grad() == 6 ? "" : " (a from each side of the product)"));
}

TEST_CASE("a leaf's grad accumulates over passes until zero_grad", "[learn.02]") {
  Value a = 2, b = 5, c = -1;
  learn::backward(a * b);
  learn::backward(a * c);
  LEARN_CHECK(close("after backward(a * b) then backward(a * c), a.grad()", a.grad(), 5 + -1) +
              (a.grad() == 4 ? "" : " (b + c: a leaf adds what each pass brings)"));
  a.zero_grad();
  learn::backward(a * b);
  LEARN_CHECK(close("after zero_grad() and backward(a * b), a.grad()", a.grad(), 5));
}

TEST_CASE("backward frees the graph: each node forgets its backward function", "[learn.02]") {
  Value a = 2, b = 3;
  const Value p = a * b;
  const Value L = p + a;
  learn::backward(L);
  LEARN_CHECK(L.released() && p.released() ? ""
                                           : std::string("after backward(L), the nodes of L's graph should be released "
                                                         "(Value::release()), so that what they saved is freed"));
}

TEST_CASE("a second backward through a freed graph throws std::logic_error", "[learn.02]") {
  Value a = 2, b = 3;
  const Value L = a * b + a;
  learn::backward(L);
  bool refused = false;
  try {
    learn::backward(L);
  } catch (const std::logic_error&) {
    refused = true;
  }
  LEARN_CHECK(refused ? ""
                      : "backward(L) ran a second time through a graph the first pass freed; it should throw "
                        "std::logic_error instead (a graph without its backward functions cannot give gradients)");
}

TEST_CASE("with retain_graph, a second backward runs and the leaves' grads double", "[learn.02]") {
  Value a = 2, b = 3;
  const Value L = a * b + a;
  learn::backward(L, /*retain_graph=*/true);
  learn::backward(L);
  LEARN_CHECK(close("after two passes through L = a * b + a (the first with retain_graph), a.grad()", a.grad(), 2 * (3 + 1)));
  LEARN_CHECK(close("b.grad()", b.grad(), 2 * 2));
}

TEST_CASE("micrograd's neuron, with e = exp(2n) used twice, as tapegrad computes it", "[learn.02]") {
  const double x = GENERATE(take(4, random(-2.0, 2.0)));
  const auto f = [](auto w, auto b) {
    const auto n = w * 0.7 + b;
    const auto e = exp(n * 2.0);
    return (e - 1.0) * (e + 1.0);
  };
  Value w = x, b = 0.3;
  learn::backward(f(w, b));
  const auto leaf = [](double v) { return tapegrad::scalar_tensor(v, tapegrad::DType::float64).requires_grad_(); };
  const tapegrad::Tensor tw = leaf(x), tb = leaf(0.3);
  f(tw, tb).backward();
  LEARN_CHECK(close("at w = " + num(x) + ", dL/dw", w.grad(), tw.grad().item(), 1e-9));
  LEARN_CHECK(close("at w = " + num(x) + ", dL/db", b.grad(), tb.grad().item(), 1e-9));
}
