// engine.hpp — reverse-mode differentiation over the recorded graph.
#pragma once

#include <vector>

#include "tensor.hpp"

namespace tapegrad {

class Node;

// Nodes reachable from root in DFS post-order: every node comes after all of its inputs, so
// walked from the back, each node comes after every node that consumes its output (the order
// backward visits them). Inputs are visited in argument order: the order is reproducible.
std::vector<Node*> topological_order(Node* root);

// Backpropagates `grad` (dL/d root) from `root` to every leaf that requires grad,
// accumulating into their .grad(). Tensor::backward() calls this.
void run_backward(const Tensor& root, const Tensor& grad, bool retain_graph);

}  // namespace tapegrad
