// value.hpp — a scalar autodiff engine of micrograd's size, which exercises 1, 2 and 5 complete.
//
//   Value a = 2.0, b = -3.0;
//   Value L = a * b + a;          // exercise 1 writes the backward of * and +
//   backward(L);                  // exercise 2 writes the walk, exercise 5 the order it walks in
//   a.grad();                     // dL/da = b + 1 = -2
//
// A Value is a handle to a Node (copies share it, as Python's objects do in micrograd). A node
// made by an op keeps its inputs (children) and a backward function: given dL/d(this node), it
// returns dL/d(child) for each child, by the chain rule. It does not add them anywhere itself:
// adding them up is the engine's job (exercise 2), as in tapegrad (autograd/engine.cpp).
// That split is why fan-out (a value used twice) is one `+=` in one place.
#pragma once

#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "todo.hpp"

namespace learn {

struct Node;

class Value {
 public:
  Value(double data);  // a leaf: implicit, so that `a * 2.0` works
  // The output of an op: its data, the inputs it was computed from, the op's name.
  static Value from_op(double data, std::vector<Value> children, std::string op);

  double data() const;
  double grad() const;
  // A Value is a handle: these change the node it shares, so they are const, as in
  // shared_ptr's own API.
  void zero_grad() const;  // grad = 0 (the gradient accumulates across backward passes until then)
  const std::string& op() const;                  // "" for a leaf
  const std::vector<Value>& children() const;     // the op's inputs, in argument order
  Node* node() const { return node_.get(); }      // identity: the same node for every copy

  // dL/d(this) -> dL/d(child) for each child, in the order of children().
  using BackwardFn = std::function<std::vector<double>(double dout)>;
  void set_backward(BackwardFn fn);
  const BackwardFn& backward_fn() const;
  void release() const;  // forgets the backward function (a freed graph: retain_graph was false)
  bool released() const;
  void add_to_grad(double g) const;  // grad += g

 private:
  friend struct Node;  // its destructor frees long chains without recursion
  std::shared_ptr<Node> node_;
};

// Exercise 1: the forward and the backward of the two ops.
Value operator+(const Value& a, const Value& b);
Value operator*(const Value& a, const Value& b);
// Given (read them before exercise 1: they are written the way it asks).
Value operator-(const Value& a);
Value operator-(const Value& a, const Value& b);
Value tanh(const Value& x);
Value exp(const Value& x);

// Exercise 5: every node reachable from root, each after all of its children (inputs), each
// once: a topological order of the graph. The engine walks it from the back.
std::vector<Value> topological_order(const Value& root);

// Exercise 2: the backward pass from root. dL/dL = 1; walk the topological order from the back;
// each node's backward function gives its children's gradients, which are added (+=) to what
// they hold. Unless retain_graph, each node forgets its backward function once it has run, and
// a second backward through a freed graph throws std::logic_error saying so.
void backward(const Value& root, bool retain_graph = false);

}  // namespace learn
