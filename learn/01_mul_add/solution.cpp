// Exercise 1, solved: the chain rule, one op at a time.
//   out = a + b:  ∂out/∂a = 1, ∂out/∂b = 1,  so dL/da = dout,     dL/db = dout
//   out = a · b:  ∂out/∂a = b, ∂out/∂b = a,  so dL/da = dout · b, dL/db = dout · a
// The backward returns the two gradients; it does not add them into a.grad() itself: the
// engine does (exercise 2), so that a value used twice gets the sum of both.
#include "scalar/value.hpp"

namespace learn {

Value operator+(const Value& a, const Value& b) {
  Value out = Value::from_op(a.data() + b.data(), {a, b}, "+");
  out.set_backward([](double dout) -> std::vector<double> { return {dout, dout}; });
  return out;
}

Value operator*(const Value& a, const Value& b) {
  const double x = a.data(), y = b.data();  // what the backward will need, saved now
  Value out = Value::from_op(x * y, {a, b}, "*");
  out.set_backward([x, y](double dout) -> std::vector<double> { return {dout * y, dout * x}; });
  return out;
}

}  // namespace learn
