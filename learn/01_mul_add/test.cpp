// The properties exercise 1 is graded on (tag [learn.01]): the backward of + and * on their
// own, then through whole expressions, against tapegrad's own engine on the same expressions
// (float64 scalars), at hand-picked and at random values.
#include <cmath>

#include "grading/grading.hpp"
#include "scalar/value.hpp"

using learn::Value;
using learn::grading::close;
using learn::grading::num;

namespace {

// The same expression on learn's Values and on tapegrad's tensors: the gradients tapegrad's
// engine gives are the ones to match.
template <typename F>
void check_against_tapegrad(const std::string& name, F f, double a, double b, double c) {
  Value va = a, vb = b, vc = c;
  learn::backward(f(va, vb, vc));
  using tapegrad::DType;
  const auto leaf = [](double v) { return tapegrad::scalar_tensor(v, DType::float64).requires_grad_(); };
  const tapegrad::Tensor ta = leaf(a), tb = leaf(b), tc = leaf(c);
  f(ta, tb, tc).backward();
  const std::string at = " of " + name + " at a = " + num(a) + ", b = " + num(b) + ", c = " + num(c);
  LEARN_CHECK(close("∂L/∂a" + at, va.grad(), ta.grad().item()));
  LEARN_CHECK(close("∂L/∂b" + at, vb.grad(), tb.grad().item()));
  LEARN_CHECK(close("∂L/∂c" + at, vc.grad(), tc.grad().item()));
}

}  // namespace

TEST_CASE("a + b and a * b compute their values (the forward, given)", "[learn.01]") {
  LEARN_CHECK(close("2 + (-3)", (Value(2) + Value(-3)).data(), -1));
  LEARN_CHECK(close("2 * (-3)", (Value(2) * Value(-3)).data(), -6));
}

TEST_CASE("the backward of a + b sends dout to both inputs: d(a + b)/da = d(a + b)/db = 1", "[learn.01]") {
  const Value out = Value(2) + Value(-3);
  const std::vector<double> d = out.backward_fn()(2.5);
  REQUIRE(d.size() == 2);
  LEARN_CHECK(close("with dout = 2.5, dL/da", d[0], 2.5));
  LEARN_CHECK(close("with dout = 2.5, dL/db", d[1], 2.5));
}

TEST_CASE("the backward of a * b sends dout times the other input: d(ab)/da = b, d(ab)/db = a", "[learn.01]") {
  const Value out = Value(2) * Value(-3);
  const std::vector<double> d = out.backward_fn()(0.5);
  LEARN_REQUIRE(d.size() == 2 ? "" : "the backward of a * b returned " + std::to_string(d.size()) + " gradients, it should return 2 (one per input)");
  LEARN_CHECK(close("a = 2, b = -3, dout = 0.5: dL/da", d[0], 0.5 * -3));
  LEARN_CHECK(close("a = 2, b = -3, dout = 0.5: dL/db", d[1], 0.5 * 2));
}

TEST_CASE("the chain rule through both: L = (a * b + c) * a, as tapegrad computes it", "[learn.01]") {
  check_against_tapegrad("(a * b + c) * a", [](auto a, auto b, auto c) { return (a * b + c) * a; }, 2, -3, 0.5);
}

TEST_CASE("micrograd's neuron: L = tanh(a * 0.5 + b * c), as tapegrad computes it", "[learn.01]") {
  check_against_tapegrad("tanh(a * 0.5 + b * c)", [](auto a, auto b, auto c) { return tanh(a * 0.5 + b * c); }, 0.7,
                         -1.2, 0.4);
}

TEST_CASE("at random values: L = a * b * c + b * (c + a), as tapegrad computes it", "[learn.01]") {
  const double a = GENERATE(take(5, random(-3.0, 3.0)));
  const double b = GENERATE(take(2, random(-3.0, 3.0)));
  const double c = GENERATE(take(2, random(-3.0, 3.0)));
  check_against_tapegrad("a * b * c + b * (c + a)", [](auto x, auto y, auto z) { return x * y * z + y * (z + x); }, a,
                         b, c);
}
