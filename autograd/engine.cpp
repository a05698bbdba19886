// engine.cpp — the backward pass, in one file a learner can read in ten minutes.
//
// 1. Order: an iterative depth-first search from the root's node lists every node after all
//    the nodes that consume its output (a topological order of the graph, reversed).
// 2. Seed: dL/dL = 1 (or the gradient the caller passed for a non-scalar root).
// 3. Walk the nodes in that order. Each node receives the sum of the gradients flowing into
//    its output, and its backward function turns it into one gradient per input. A tensor
//    used twice (fan-out) receives two contributions, which are added: this `+=` is why
//    gradients of leaves accumulate, and micrograd's famous bug when forgotten.
// 4. Leaves collect their gradient in .grad(); each node frees its saved tensors once used,
//    unless retain_graph asks to keep them for a second backward.
// Hooks (hooks.hpp) run where the gradient of their tensor is known: a non-leaf's when its
// node's gradient is complete (run_node_hooks), a leaf's when the pass has delivered all of
// it (LeafDelivery, hook_runner.hpp).
#include "engine.hpp"

#include <string>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "anomaly.hpp"
#include "grad_mode.hpp"
#include "hook_runner.hpp"
#include "node.hpp"
#include "ops.hpp"
#include "profiler.hpp"

namespace tapegrad {

std::vector<Node*> topological_order(Node* root) {
  std::vector<Node*> post_order;
  std::unordered_set<Node*> visited{root};
  // Each stack entry is a node and the index of the next input edge to explore; children
  // are visited in argument order so the order (and printed graphs) are reproducible.
  std::vector<std::pair<Node*, std::size_t>> stack{{root, 0}};
  while (!stack.empty()) {
    auto& [node, next] = stack.back();
    if (next < node->next_edges.size()) {
      Node* child = node->next_edges[next++].node.get();
      if (child && visited.insert(child).second) stack.emplace_back(child, 0);
    } else {
      post_order.push_back(node);
      stack.pop_back();
    }
  }
  return post_order;
}

namespace {

void check_gradient(const Node& node, std::size_t input, const Tensor& grad) {
  if (grad.shape() != node.input_shapes[input] || grad.dtype() != node.input_dtypes[input])
    throw GraphError("backward of '" + node.name + "' returned a gradient of shape " +
                     shape_str(grad.shape()) + " (" + dtype_name(grad.dtype()) + ") for input " +
                     std::to_string(input) + " of shape " + shape_str(node.input_shapes[input]) +
                     " (" + dtype_name(node.input_dtypes[input]) + ")");
}

}  // namespace

void run_backward(const Tensor& root, const Tensor& grad, bool retain_graph) {
  if (!root.requires_grad())
    throw GraphError("backward: the tensor of shape " + shape_str(root.shape()) +
                     " does not require grad and has no grad_fn (call requires_grad_() on the "
                     "parameters, and do not run the forward pass under NoGradGuard)");
  Tensor seed = grad;
  if (!seed.defined()) {
    if (root.numel() != 1)
      throw GraphError("backward: a gradient can be created implicitly only for a one-element "
                       "output, but the output has shape " + shape_str(root.shape()) +
                       "; pass backward(grad) with a gradient of that shape");
    seed = ones(root.shape(), root.dtype());
  } else if (seed.shape() != root.shape() || seed.dtype() != root.dtype()) {
    throw ShapeError("backward: the gradient has shape " + shape_str(seed.shape()) + " (" +
                     dtype_name(seed.dtype()) + ") but the output has shape " +
                     shape_str(root.shape()) + " (" + dtype_name(root.dtype()) + ")");
  }

  NoGradGuard no_grad;  // the backward pass itself is not recorded (no double backward)
  if (root.is_leaf()) {
    detail::LeafDelivery::deliver_root(root.impl_ptr(), seed);
    return;
  }

  std::vector<Node*> order = topological_order(root.grad_fn().get());
  for (auto it = order.rbegin(); it != order.rend(); ++it)  // name the one nearest the output
    if (Node* node = *it; node->released())
      throw GraphError("backward: trying to backward through the graph a second time: the "
                       "saved tensors of '" + node->name + "' (output shape " +
                       shape_str(node->output_shape) + ") were freed by the first backward; "
                       "pass retain_graph=true to the first backward to keep them");

  // Sum of the gradients received so far by each node's output.
  std::unordered_map<Node*, Tensor> grads{{root.grad_fn().get(), seed}};
  detail::LeafDelivery leaves(order);
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    Node* node = *it;
    auto found = grads.find(node);
    if (found == grads.end()) {  // a node may receive nothing (inputs that get no gradient)
      leaves.skip(*node);
    } else {
      Tensor dout = detail::run_node_hooks(*node, std::move(found->second));
      grads.erase(found);
      profiler::Scope timed(node->name.c_str(), profiler::Phase::backward);
      TensorList dinputs = node->apply(dout);
      if (dinputs.size() != node->next_edges.size())
        throw GraphError("backward of '" + node->name + "' returned " +
                         std::to_string(dinputs.size()) + " gradients for " +
                         std::to_string(node->next_edges.size()) + " inputs");
      for (std::size_t i = 0; i < dinputs.size(); ++i) {
        const Tensor& g = dinputs[i];
        if (!node->needs_input_grad[i]) continue;
        const Edge& edge = node->next_edges[i];
        if (!g.defined()) {
          if (edge.leaf) leaves.deliver(edge.leaf, g);  // counts down what the leaf awaits
          continue;
        }
        check_gradient(*node, i, g);
        if (is_anomaly_enabled() && has_non_finite(g))
          throw AnomalyError("anomaly: backward of '" + node->name + "'" +
                             (node->module_path.empty() ? "" : " (module '" + node->module_path + "')") +
                             " produced a NaN/Inf gradient for input " + std::to_string(i) + " of shape " +
                             shape_str(node->input_shapes[i]));
        if (edge.node) {
          auto [slot, inserted] = grads.try_emplace(edge.node.get(), g);
          if (!inserted) slot->second = add(slot->second, g);  // fan-out: gradients add up
        } else if (edge.leaf) {
          leaves.deliver(edge.leaf, g);
        }
      }
    }
    if (!retain_graph) node->release();  // free the saved tensors as soon as they are used
  }
  profiler::mark();
}

}  // namespace tapegrad
