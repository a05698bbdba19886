// Exercise 2, solved: the backward pass, with the two rules micrograd's first version missed.
// 1. Fan-out: a value used twice receives two gradients, and its gradient is their SUM
//    (the multivariable chain rule). Every arrival is `+=`, never `=`.
// 2. Lifetime: a pass frees what the graph saved (here: each node's backward function) once
//    it has run, unless retain_graph; a second pass through a freed graph must refuse, loudly,
//    rather than give a wrong answer.
// Leaves keep their .grad() across passes (it accumulates until zero_grad(), as PyTorch's
// .grad does); the gradients of the nodes in between live only during the pass.
#include <stdexcept>
#include <unordered_map>

#include "scalar/value.hpp"

namespace learn {

void backward(const Value& root, bool retain_graph) {
  const std::vector<Value> order = topological_order(root);  // children before parents
  for (const Value& v : order)
    if (v.released())
      throw std::logic_error("backward: the graph was freed by an earlier backward (its '" + v.op() +
                             "' node has no backward function any more); pass retain_graph = true to the "
                             "first backward to keep it");
  std::unordered_map<Node*, double> received{{root.node(), 1.0}};  // dL/dL = 1
  for (auto it = order.rbegin(); it != order.rend(); ++it) {        // parents before children
    const Value& v = *it;
    const double dout = received[v.node()];  // the sum of everything v's users sent it
    if (v.children().empty()) {              // a leaf: its .grad() keeps it
      v.add_to_grad(dout);
      continue;
    }
    const std::vector<double> dinputs = v.backward_fn()(dout);
    for (std::size_t i = 0; i < dinputs.size(); ++i) received[v.children()[i].node()] += dinputs[i];  // fan-out adds
    if (!retain_graph) v.release();
  }
}

}  // namespace learn
