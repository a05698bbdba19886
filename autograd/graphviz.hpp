// graphviz.hpp — look inside the tape: print the recorded graph, or draw it with Graphviz.
//
//   std::cout << graph_string(loss);          // one line per op, in execution order
//   std::ofstream("graph.dot") << to_dot(loss); // then: dot -Tpng graph.dot -o graph.png
#pragma once

#include <string>

#include "tensor.hpp"

namespace tapegrad {

// The ops that produced `root`, in the order they ran, one per line:
//   #3 mul   [2, 3] <- #1 add [2, 3], leaf [2, 3] (requires grad)
std::string graph_string(const Tensor& root);

// Graphviz DOT of the graph behind `root` (micrograd's draw_dot): a box per op, a record per
// leaf with its shape, values and grad when small ("data | grad"), edges in the direction of
// the forward pass.
std::string to_dot(const Tensor& root);

}  // namespace tapegrad
