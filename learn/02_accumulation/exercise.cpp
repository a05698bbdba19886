// Exercise 2: gradient accumulation and the graph's lifetime. Read README.md beside this file
// first.
//
// This backward pass is the one micrograd's first version had, and it gives wrong gradients:
// run `tapegrad-learn check 2` and read what fails before you change anything. Then fix it:
// - a value used twice must receive the sum of both gradients;
// - a pass frees each node's backward function once it has run (release()), unless
//   retain_graph, and a second pass through a freed graph throws std::logic_error.
#include <stdexcept>
#include <unordered_map>

#include "scalar/value.hpp"

namespace learn {

void backward(const Value& root, bool retain_graph) {
  (void)retain_graph;  // TODO exercise 2: free the graph unless retain_graph, and refuse a freed one
  const std::vector<Value> order = topological_order(root);  // children before parents
  std::unordered_map<Node*, double> received{{root.node(), 1.0}};  // dL/dL = 1
  for (auto it = order.rbegin(); it != order.rend(); ++it) {        // parents before children
    const Value& v = *it;
    const double dout = received[v.node()];
    if (v.children().empty()) {  // a leaf: its .grad() keeps what it received
      v.add_to_grad(dout);
      continue;
    }
    const std::vector<double> dinputs = v.backward_fn()(dout);
    for (std::size_t i = 0; i < dinputs.size(); ++i) received[v.children()[i].node()] = dinputs[i];
  }
}

}  // namespace learn
