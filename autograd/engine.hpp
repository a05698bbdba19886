// engine.hpp — reverse-mode differentiation over the recorded graph.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "grad_options.hpp"
#include "tensor.hpp"

namespace tapegrad {

class Node;

// Nodes reachable from root in DFS post-order: every node comes after all of its inputs, so
// walked from the back, each node comes after every node that consumes its output (the order
// backward visits them). Inputs are visited in argument order: the order is reproducible.
std::vector<Node*> topological_order(Node* root);
// Several roots, and (for grad()) no node older than min_sequence_nr: the search stops there.
std::vector<Node*> topological_order(const std::vector<Node*>& roots, std::uint64_t min_sequence_nr = 0);

// Backpropagates `grad` (dL/d root) from `root` to every leaf that requires grad,
// accumulating into their .grad(). Tensor::backward() calls this. With create_graph the
// backward pass is itself recorded (and the graph retained): the gradients it leaves in
// .grad() can be differentiated again.
void run_backward(const Tensor& root, const Tensor& grad, const BackwardOptions& options = {});

// torch.autograd.grad: the gradients of the outputs (weighted by grad_outputs, default 1 for
// one-element outputs) with respect to each of inputs (leaves or not), returned instead of
// accumulated in .grad(); no .grad() changes and no leaf hook runs. The flags go by name
// (grad_options.hpp): grad({y}, {x}, {}, {.create_graph = true}). retain_graph defaults to
// create_graph. An input the outputs do not depend on is an error unless allow_unused (then
// its gradient is undefined).
TensorList grad(const TensorList& outputs, const TensorList& inputs, const TensorList& grad_outputs = {},
                const GradOptions& options = {});

namespace detail {
// The backward pass of a recomputation (checkpoint, fused ops under create_graph,
// recompute.hpp): from root, seeded with seed, it returns the gradients reaching `inputs`
// (non-leaves: the aliases the recomputation ran on) and stops there, while every other leaf
// the recomputation used (a parameter inside a checkpointed function) gets its .grad() as in
// backward(). With create_graph the pass is recorded and the graph retained.
TensorList backward_to(const Tensor& root, const Tensor& seed, const TensorList& inputs, bool create_graph);
}  // namespace detail

}  // namespace tapegrad
