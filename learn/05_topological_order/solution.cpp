// Exercise 5, solved: a depth-first search that lists a node after all of its children (its
// post-order), written with an explicit stack instead of recursion. Why not recursion: a graph
// can be as deep as a training run is long (an RNN unrolled, a 100-layer net with 10 ops per
// layer), and each level of recursion takes a stack frame: micrograd's recursive build_topo
// overflows the stack long before memory runs out. tapegrad's engine does the same walk
// (topological_order in autograd/engine.cpp).
#include <unordered_set>
#include <utility>

#include "scalar/value.hpp"

namespace learn {

std::vector<Value> topological_order(const Value& root) {
  std::vector<Value> order;
  std::unordered_set<Node*> visited{root.node()};
  // each entry: a node, and the index of its next child to explore
  std::vector<std::pair<Value, std::size_t>> stack{{root, 0}};
  while (!stack.empty()) {
    auto& [v, next] = stack.back();
    if (next < v.children().size()) {
      const Value child = v.children()[next++];
      if (visited.insert(child.node()).second) stack.emplace_back(child, 0);  // may move `v`: copy first
    } else {
      order.push_back(v);  // every child is listed: now the node
      stack.pop_back();
    }
  }
  return order;
}

}  // namespace learn
