// grad_capture.cpp — grad() and backward_to(): a backward pass asked for some gradients
// instead of filling .grad() (grad_capture.hpp says how the three kinds of pass differ).
#include "grad_capture.hpp"

#include <algorithm>
#include <string>

#include "engine.hpp"
#include "ops.hpp"

namespace tapegrad {

namespace detail {

void Capture::add(std::size_t i, const Tensor& g) { grads[i] = grads[i].defined() ? tapegrad::add(grads[i], g) : g; }

std::uint64_t Capture::min_sequence_nr() const {
  if (!leaves.empty() || nodes.empty()) return 0;
  std::uint64_t m = UINT64_MAX;
  for (const auto& entry : nodes) m = std::min(m, entry.first->sequence_nr);
  return m;
}

std::unordered_set<const Node*> nodes_leading_to(const std::vector<Node*>& order, const Capture& c) {
  std::unordered_set<const Node*> needed;
  for (const Node* node : order) {  // inputs come first in the order
    bool leads = c.nodes.count(node) > 0;
    for (const Edge& e : node->next_edges)
      leads = leads || (e.node && needed.count(e.node.get())) || (e.leaf && c.leaves.count(e.leaf.get()));
    leads = leads || (node->reaches_hidden_leaves && !c.leaves.empty());
    if (leads) needed.insert(node);
  }
  return needed;
}

Capture capture_of(const TensorList& inputs, const char* who) {
  Capture capture;
  capture.grads.resize(inputs.size());
  for (std::size_t k = 0; k < inputs.size(); ++k) {
    const Tensor& x = inputs[k];
    if (!x.defined() || !x.requires_grad())
      throw GraphError(std::string(who) + ": input " + std::to_string(k) + " does not require grad");
    if (x.is_leaf()) capture.leaves.emplace(&x.impl(), k);
    else capture.nodes.emplace(x.grad_fn().get(), k);
  }
  return capture;
}

Tensor seed_for(const Tensor& root, const Tensor& grad, const char* who) {
  if (!root.requires_grad())
    throw GraphError(std::string(who) + ": the tensor of shape " + shape_str(root.shape()) +
                     " does not require grad and has no grad_fn (call requires_grad_() on the "
                     "parameters, and do not run the forward pass under NoGradGuard)");
  if (!grad.defined()) {
    if (root.numel() != 1)
      throw GraphError(std::string(who) + ": a gradient can be created implicitly only for a one-element "
                       "output, but the output has shape " + shape_str(root.shape()) +
                       "; pass a gradient of that shape");
    return ones(root.shape(), root.dtype());
  }
  if (grad.shape() != root.shape() || grad.dtype() != root.dtype())
    throw ShapeError(std::string(who) + ": the gradient has shape " + shape_str(grad.shape()) + " (" +
                     dtype_name(grad.dtype()) + ") but the output has shape " +
                     shape_str(root.shape()) + " (" + dtype_name(root.dtype()) + ")");
  return grad;
}

TensorList backward_to(const Tensor& root, const Tensor& seed, const TensorList& inputs, bool create_graph) {
  Capture capture = capture_of(inputs, "backward_to");
  if (!capture.leaves.empty()) throw GraphError("backward_to: the inputs must be non-leaves");
  capture.fill_other_leaves = true;
  run_pass({root}, {seed_for(root, seed, "backward_to")}, create_graph, create_graph, &capture);
  return capture.grads;
}

}  // namespace detail

TensorList grad(const TensorList& outputs, const TensorList& inputs, const TensorList& grad_outputs,
                const GradOptions& options) {
  if (!grad_outputs.empty() && grad_outputs.size() != outputs.size())
    throw ValueError("grad: " + std::to_string(grad_outputs.size()) + " grad_outputs for " +
                     std::to_string(outputs.size()) + " outputs");
  TensorList seeds;
  for (std::size_t i = 0; i < outputs.size(); ++i)
    seeds.push_back(detail::seed_for(outputs[i], grad_outputs.empty() ? Tensor() : grad_outputs[i], "grad"));
  detail::Capture capture = detail::capture_of(inputs, "grad");
  detail::run_pass(outputs, seeds, options.retain_graph.value_or(options.create_graph), options.create_graph, &capture);
  for (std::size_t k = 0; k < inputs.size(); ++k)
    if (!capture.grads[k].defined() && !options.allow_unused)
      throw GraphError("grad: input " + std::to_string(k) + " (shape " + shape_str(inputs[k].shape()) +
                       ") was not used to compute the outputs; pass GradOptions{.allow_unused = true} to get an "
                       "undefined tensor for it");
  return capture.grads;
}

}  // namespace tapegrad
