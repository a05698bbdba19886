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
// With create_graph the pass is itself recorded (grad mode stays on while the backward
// functions run), so its results can be differentiated again; each node's backward must then
// be written with differentiable ops (DoubleBackward::supported, node.hpp). grad() runs the
// same pass but returns the gradients of the tensors it is asked about instead of filling
// .grad(), and visits only the nodes on a path to them.
#include "engine.hpp"

#include <algorithm>
#include <cstdint>
#include <functional>
#include <optional>
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

std::vector<Node*> topological_order(const std::vector<Node*>& roots, std::uint64_t min_sequence_nr) {
  std::vector<Node*> post_order;
  std::unordered_set<Node*> visited;
  for (Node* root : roots) {
    if (!root || !visited.insert(root).second) continue;
    // Each stack entry is a node and the index of the next input edge to explore; children
    // are visited in argument order so the order (and printed graphs) are reproducible.
    std::vector<std::pair<Node*, std::size_t>> stack{{root, 0}};
    while (!stack.empty()) {
      auto& [node, next] = stack.back();
      if (next < node->next_edges.size()) {
        Node* child = node->next_edges[next++].node.get();
        if (child && child->sequence_nr >= min_sequence_nr && visited.insert(child).second)
          stack.emplace_back(child, 0);
      } else {
        post_order.push_back(node);
        stack.pop_back();
      }
    }
  }
  return post_order;
}

std::vector<Node*> topological_order(Node* root) { return topological_order(std::vector<Node*>{root}, 0); }

namespace {

void check_gradient(const Node& node, std::size_t input, const Tensor& grad) {
  if (grad.shape() != node.input_shapes[input] || grad.dtype() != node.input_dtypes[input])
    throw GraphError("backward of '" + node.name + "' returned a gradient of shape " +
                     shape_str(grad.shape()) + " (" + dtype_name(grad.dtype()) + ") for input " +
                     std::to_string(input) + " of shape " + shape_str(node.input_shapes[input]) +
                     " (" + dtype_name(node.input_dtypes[input]) + ")");
}

// What grad() asks for: the gradients of some leaves and some non-leaves, by position.
struct Capture {
  std::unordered_map<const TensorImpl*, std::size_t> leaves;
  std::unordered_map<const Node*, std::size_t> nodes;
  TensorList grads;
  // detail::backward_to: the leaves not asked about still get their .grad() filled.
  bool fill_other_leaves = false;
  void add(std::size_t i, const Tensor& g) { grads[i] = grads[i].defined() ? tapegrad::add(grads[i], g) : g; }
  // A node consumes tensors made before it, so every node on a path to a captured node was
  // made after it: when only non-leaves are asked about, the search stops at nodes older than
  // the oldest of them (PyTorch prunes by the same rule). Without it, a grad() inside a
  // backward function would walk the whole graph below the tensors it asks about.
  std::uint64_t min_sequence_nr() const {
    if (!leaves.empty() || nodes.empty()) return 0;
    std::uint64_t m = UINT64_MAX;
    for (const auto& entry : nodes) m = std::min(m, entry.first->sequence_nr);
    return m;
  }
};

// The nodes from which a captured tensor can be reached: the only ones grad() must run.
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

// The pass a recomputation's pass (backward_to) runs inside, on this thread: the leaves it
// reaches are served as that pass serves its own — into .grad() for backward(), into the
// captured gradients (or nowhere) for grad().
struct EnclosingPass {
  Capture* grad_capture;  // the outermost grad()'s capture; null inside a backward()
};
thread_local const EnclosingPass* enclosing_pass = nullptr;

// The sum of the gradients that `node`'s output has received so far, for a backward function
// to add its own into (fan-out, as a residual stream's LayerNorm input has: the add's gradient
// arrived first). Only where nothing else holds that tensor or its memory: the engine's map
// is then the one owner, and the sum comes out the same as the engine's own add, a + b
// elementwise. Otherwise, and when nothing has arrived yet, undefined.
Tensor pending_sum_to_add_into(const std::unordered_map<Node*, Tensor>& grads, Node* node) {
  const auto found = grads.find(node);
  if (found == grads.end()) return Tensor();
  const Tensor& sum = found->second;
  const bool sole_owner = sum.impl_ptr().use_count() == 1 && sum.impl().storage.use_count() == 1;
  if (!sole_owner || sum.requires_grad() || !sum.is_contiguous()) return Tensor();
  return sum;
}

// The backward pass from roots (seeded with seeds): into the leaves' .grad(), or into
// capture's gradients when capture is given.
void run_pass(const TensorList& roots, const TensorList& seeds, bool retain_graph, bool create_graph, Capture* capture) {
  GradModeGuard recording(create_graph);  // off: the backward pass itself is not recorded
  const bool recomputation = capture && capture->fill_other_leaves;
  // Leaves this pass does not capture itself: a recomputation inside a grad() hands them to
  // that grad()'s capture; inside a backward() (or alone) it fills their .grad().
  Capture* outer = recomputation && enclosing_pass ? enclosing_pass->grad_capture : nullptr;
  const bool fills_leaves = !capture || (recomputation && !outer);
  const EnclosingPass this_pass{capture && !recomputation ? capture : outer};
  const EnclosingPass* previous_pass = enclosing_pass;
  if (!recomputation) enclosing_pass = &this_pass;
  struct Restore {
    const EnclosingPass* previous;
    ~Restore() { enclosing_pass = previous; }
  } restore{previous_pass};
  // A contribution to a leaf: captured when grad() asks for it, otherwise into its .grad().
  auto to_leaf = [&](const std::shared_ptr<TensorImpl>& leaf, const Tensor& g, detail::LeafDelivery* delivery) {
    for (Capture* c : {capture, outer}) {
      if (!c) continue;
      if (auto found = c->leaves.find(leaf.get()); found != c->leaves.end()) {
        if (g.defined()) c->add(found->second, g);
        return;
      }
    }
    if (!fills_leaves) return;
    if (delivery) delivery->deliver(leaf, g);
    else detail::LeafDelivery::deliver_root(leaf, g, create_graph);
  };
  std::vector<Node*> root_nodes;
  for (std::size_t r = 0; r < roots.size(); ++r) {
    if (roots[r].is_leaf()) to_leaf(roots[r].impl_ptr(), seeds[r], nullptr);
    else root_nodes.push_back(roots[r].grad_fn().get());
  }
  if (root_nodes.empty()) return;

  std::vector<Node*> order = topological_order(root_nodes, capture ? capture->min_sequence_nr() : 0);
  for (auto it = order.rbegin(); it != order.rend(); ++it)  // name the one nearest the output
    if (Node* node = *it; node->released())
      throw GraphError("backward: trying to backward through the graph a second time: the "
                       "saved tensors of '" + node->name + "' (output shape " +
                       shape_str(node->output_shape) + ") were freed by the first backward; "
                       "pass retain_graph=true to the first backward to keep them");
  const bool prune = capture && !capture->fill_other_leaves;
  const std::unordered_set<const Node*> needed = prune ? nodes_leading_to(order, *capture) : std::unordered_set<const Node*>{};

  // Sum of the gradients received so far by each node's output.
  std::unordered_map<Node*, Tensor> grads;
  for (std::size_t r = 0; r < roots.size(); ++r)
    if (!roots[r].is_leaf()) {
      auto [slot, inserted] = grads.try_emplace(roots[r].grad_fn().get(), seeds[r]);
      if (!inserted) slot->second = add(slot->second, seeds[r]);
    }
  std::vector<Node*> feeding_leaves;  // the nodes whose leaf edges this pass serves
  if (fills_leaves)
    for (Node* node : order)
      if (!capture || !capture->nodes.count(node)) feeding_leaves.push_back(node);
  detail::LeafDelivery leaves(feeding_leaves, create_graph);
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    Node* node = *it;
    auto found = grads.find(node);
    if (prune && !needed.count(node)) {  // grad(): no path from here to what was asked
      if (found != grads.end()) grads.erase(found);
    } else if (found == grads.end()) {  // a node may receive nothing (inputs that get no gradient)
      if (fills_leaves && !(capture && capture->nodes.count(node))) leaves.skip(*node);
    } else {
      Tensor dout = detail::run_node_hooks(*node, std::move(found->second));
      grads.erase(found);
      bool stop = false;  // backward_to: the gradient of an input goes no further
      if (capture)
        if (auto c = capture->nodes.find(node); c != capture->nodes.end()) {
          capture->add(c->second, dout);
          stop = capture->fill_other_leaves;
        }
      if (stop) {
        if (!retain_graph) node->release();
        continue;
      }
      if (create_graph && node->double_backward != DoubleBackward::supported)
        throw GraphError("backward of '" + node->name + "' (output shape " + shape_str(node->output_shape) +
                         ") is not written with differentiable ops, so it cannot be recorded for a higher-order "
                         "gradient (create_graph); pass DoubleBackward::supported to record() once it is");
      profiler::Scope timed(node->name.c_str(), profiler::Phase::backward);
      // Released as soon as it has run unless the graph is retained, even when what follows
      // throws: its backward may have written over what it kept (saved_tensors_freed_after).
      struct ReleaseAfter {
        Node* node;
        bool release;
        ~ReleaseAfter() {
          if (release) node->release();
        }
      } release_after{node, !retain_graph};
      // May input i's backward add its gradient itself into where the engine would add it
      // (grad_to_add_into)? Into a leaf's .grad() only where to_leaf would add it there in
      // place; into the sum received so far by the node behind a non-leaf input (fan-out) only
      // where this pass alone holds that sum, so that no one else sees it change.
      const std::function<Tensor(std::size_t)> add_into = [&](std::size_t i) -> Tensor {
        if (is_anomaly_enabled() || create_graph || i >= node->next_edges.size() || !node->needs_input_grad[i])
          return Tensor();
        const Edge& edge = node->next_edges[i];
        if (edge.node) return pending_sum_to_add_into(grads, edge.node.get());
        if (!fills_leaves || !edge.leaf) return Tensor();
        for (const Capture* c : {capture, outer})
          if (c && c->leaves.count(edge.leaf.get())) return Tensor();
        return leaves.grad_to_add_into(edge.leaf);
      };
      TensorList dinputs = node->apply(dout, !retain_graph, &add_into);
      if (dinputs.size() != node->next_edges.size())
        throw GraphError("backward of '" + node->name + "' returned " +
                         std::to_string(dinputs.size()) + " gradients for " +
                         std::to_string(node->next_edges.size()) + " inputs");
      for (std::size_t i = 0; i < dinputs.size(); ++i) {
        const Tensor& g = dinputs[i];
        if (!node->needs_input_grad[i]) continue;
        const Edge& edge = node->next_edges[i];
        if (!g.defined()) {
          if (edge.leaf) to_leaf(edge.leaf, g, &leaves);  // counts down what the leaf awaits
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
          to_leaf(edge.leaf, g, &leaves);
        }
      }
    }
    if (!retain_graph) node->release();  // free the saved tensors as soon as they are used
  }
  profiler::mark();
}

// dL/d root, checked against the root: the given one, or 1 for a one-element root.
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

}  // namespace

void run_backward(const Tensor& root, const Tensor& grad, bool retain_graph, bool create_graph) {
  run_pass({root}, {seed_for(root, grad, "backward")}, retain_graph || create_graph, create_graph, nullptr);
}

namespace {

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

}  // namespace

TensorList grad(const TensorList& outputs, const TensorList& inputs, const TensorList& grad_outputs,
                std::optional<bool> retain_graph, bool create_graph, bool allow_unused) {
  if (!grad_outputs.empty() && grad_outputs.size() != outputs.size())
    throw ValueError("grad: " + std::to_string(grad_outputs.size()) + " grad_outputs for " +
                     std::to_string(outputs.size()) + " outputs");
  TensorList seeds;
  for (std::size_t i = 0; i < outputs.size(); ++i)
    seeds.push_back(seed_for(outputs[i], grad_outputs.empty() ? Tensor() : grad_outputs[i], "grad"));
  Capture capture = capture_of(inputs, "grad");
  run_pass(outputs, seeds, retain_graph.value_or(create_graph), create_graph, &capture);
  for (std::size_t k = 0; k < inputs.size(); ++k)
    if (!capture.grads[k].defined() && !allow_unused)
      throw GraphError("grad: input " + std::to_string(k) + " (shape " + shape_str(inputs[k].shape()) +
                       ") was not used to compute the outputs; pass allow_unused = true to get an undefined "
                       "tensor for it");
  return capture.grads;
}

TensorList detail::backward_to(const Tensor& root, const Tensor& seed, const TensorList& inputs, bool create_graph) {
  Capture capture = capture_of(inputs, "backward_to");
  if (!capture.leaves.empty()) throw GraphError("backward_to: the inputs must be non-leaves");
  capture.fill_other_leaves = true;
  run_pass({root}, {seed_for(root, seed, "backward_to")}, create_graph, create_graph, &capture);
  return capture.grads;
}

}  // namespace tapegrad
