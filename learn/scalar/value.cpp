// value.cpp — the node behind a Value, and the ops the exercises do not ask for.
#include "value.hpp"

#include <cmath>
#include <stdexcept>

namespace learn {

struct Node {
  double data = 0, grad = 0;
  std::vector<Value> children;
  std::string op;
  Value::BackwardFn backward;
  bool released = false;

  // A chain of a million ops would free itself recursively (each node's children hold the
  // next node), deep enough to overflow the stack: the children are taken over and freed one
  // at a time instead. tapegrad's Node does the same (autograd/node.cpp).
  ~Node() {
    std::vector<Value> pending = std::move(children);
    while (!pending.empty()) {
      Value v = std::move(pending.back());
      pending.pop_back();
      if (v.node_.use_count() == 1)
        for (Value& child : v.node_->children) pending.push_back(std::move(child));
    }
  }
};

Value::Value(double data) : node_(std::make_shared<Node>()) { node_->data = data; }

Value Value::from_op(double data, std::vector<Value> children, std::string op) {
  Value out(data);
  out.node_->children = std::move(children);
  out.node_->op = std::move(op);
  return out;
}

double Value::data() const { return node_->data; }
double Value::grad() const { return node_->grad; }
void Value::zero_grad() const { node_->grad = 0; }
const std::string& Value::op() const { return node_->op; }
const std::vector<Value>& Value::children() const { return node_->children; }
void Value::set_backward(BackwardFn fn) { node_->backward = std::move(fn); }
const Value::BackwardFn& Value::backward_fn() const { return node_->backward; }
void Value::release() const {
  node_->backward = nullptr;
  node_->released = true;
}
bool Value::released() const { return node_->released; }
void Value::add_to_grad(double g) const { node_->grad += g; }

// The given ops. Each computes its output (the forward), then sets a backward function that
// captures what the derivative needs: d(-a)/da = -1; d tanh(x)/dx = 1 - tanh(x)^2, from the
// output it saved; d exp(x)/dx = exp(x).
Value operator-(const Value& a) {
  Value out = Value::from_op(-a.data(), {a}, "neg");
  out.set_backward([](double dout) { return std::vector<double>{-dout}; });
  return out;
}

Value operator-(const Value& a, const Value& b) { return a + (-b); }

Value tanh(const Value& x) {
  const double t = std::tanh(x.data());
  Value out = Value::from_op(t, {x}, "tanh");
  out.set_backward([t](double dout) { return std::vector<double>{(1 - t * t) * dout}; });
  return out;
}

Value exp(const Value& x) {
  const double e = std::exp(x.data());
  Value out = Value::from_op(e, {x}, "exp");
  out.set_backward([e](double dout) { return std::vector<double>{e * dout}; });
  return out;
}

}  // namespace learn
