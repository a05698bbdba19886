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
// run_pass below is that loop and nothing else. Each other concern is a named step of the
// BackwardPass above it: where a leaf's gradient goes (grad() and checkpoints, grad_capture.hpp),
// hooks (hook_runner.hpp), the checks that refuse a graph that cannot give a right answer, the
// profiler, the trace (backward_trace.hpp), and letting a backward function add its gradient in place.
// With create_graph the pass is itself recorded (grad mode stays on while the backward
// functions run), so its results can be differentiated again; each node's backward must then
// be written with differentiable ops (DoubleBackward::supported, node.hpp).
#include "engine.hpp"

#include <functional>
#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "anomaly.hpp"
#include "backward_trace.hpp"
#include "grad_capture.hpp"
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

using detail::Capture;

// Refuses, before any gradient moves, a graph that cannot give the right answer: one freed by
// an earlier backward, or one whose saved tensors were written in place since (node.hpp).
void check_usable(const std::vector<Node*>& order) {
  for (auto it = order.rbegin(); it != order.rend(); ++it) {  // name the one nearest the output
    const Node* node = *it;
    if (node->released())
      throw GraphError("backward: trying to backward through the graph a second time: the "
                       "saved tensors of '" + node->name + "' (output shape " +
                       shape_str(node->output_shape) + ") were freed by an earlier backward; "
                       "pass {.retain_graph = true} to every backward but the last to keep them");
    node->check_saved_versions();
  }
}

// A backward function that runs a raw kernel cannot be recorded for a second derivative.
void check_recordable(const Node& node, bool create_graph) {
  if (create_graph && node.double_backward != DoubleBackward::supported)
    throw GraphError("backward of '" + node.name + "' (output shape " + shape_str(node.output_shape) +
                     ") is not written with differentiable ops, so it cannot be recorded for a higher-order "
                     "gradient (create_graph); pass DoubleBackward::supported to record() once it is");
}

// Why a gradient must match its input: a wrong shape would silently broadcast further down.
void check_gradient(const Node& node, std::size_t input, const Tensor& grad) {
  if (grad.shape() != node.input_shapes[input] || grad.dtype() != node.input_dtypes[input])
    throw GraphError("backward of '" + node.name + "' returned a gradient of shape " +
                     shape_str(grad.shape()) + " (" + dtype_name(grad.dtype()) + ") for input " +
                     std::to_string(input) + " of shape " + shape_str(node.input_shapes[input]) +
                     " (" + dtype_name(node.input_dtypes[input]) + ")");
  if (is_anomaly_enabled() && has_non_finite(grad))
    throw AnomalyError("anomaly: backward of '" + node.name + "'" +
                       (node.module_path.empty() ? "" : " (module '" + node.module_path + "')") +
                       " produced a NaN/Inf gradient for input " + std::to_string(input) + " of shape " +
                       shape_str(node.input_shapes[input]));
}

// The pass a recomputation's pass (backward_to) runs inside, on this thread: the leaves it
// reaches are served as that pass serves its own — into .grad() for backward(), into the
// captured gradients (or nowhere) for grad().
struct EnclosingPass {
  Capture* grad_capture;  // the outermost grad()'s capture; null inside a backward()
};
thread_local const EnclosingPass* enclosing_pass = nullptr;

// The sum of the gradients that a node's output has received so far, for a backward function
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

// What one backward pass holds while it walks: the gradients received so far by each node's
// output, and where the gradients that reach leaves go.
class BackwardPass {
 public:
  BackwardPass(Capture* capture, bool retain_graph, bool create_graph)
      : capture_(capture),
        retain_graph_(retain_graph),
        create_graph_(create_graph),
        prune_(capture && !capture->fill_other_leaves) {
    // Leaves this pass does not capture itself: a recomputation inside a grad() hands them to
    // that grad()'s capture; inside a backward() (or alone) it fills their .grad().
    const bool recomputation = capture && capture->fill_other_leaves;
    outer_ = recomputation && enclosing_pass ? enclosing_pass->grad_capture : nullptr;
    fills_leaves_ = !capture || (recomputation && !outer_);
    this_pass_.grad_capture = capture && !recomputation ? capture : outer_;
    if (!recomputation) enclosing_pass = &this_pass_;
  }
  ~BackwardPass() { enclosing_pass = previous_; }
  BackwardPass(const BackwardPass&) = delete;
  BackwardPass& operator=(const BackwardPass&) = delete;

  // Step 2: dL/d root for each root. A root that is a leaf gets its gradient at once; the
  // others are returned, for the order to start from.
  std::vector<Node*> seed(const TensorList& roots, const TensorList& seeds) {
    std::vector<Node*> root_nodes;
    for (std::size_t r = 0; r < roots.size(); ++r) {
      if (roots[r].is_leaf()) {
        to_leaf(roots[r].impl_ptr(), seeds[r], nullptr);
        continue;
      }
      root_nodes.push_back(roots[r].grad_fn().get());
      auto [slot, inserted] = grads_.try_emplace(root_nodes.back(), seeds[r]);
      if (!inserted) slot->second = add(slot->second, seeds[r]);
    }
    return root_nodes;
  }

  // Before the walk: grad() runs only the nodes on a path to what it asks for; leaves with
  // hooks learn how many contributions to wait for (hook_runner.hpp).
  void plan(const std::vector<Node*>& order) {
    if (prune_) needed_ = detail::nodes_leading_to(order, *capture_);
    std::vector<Node*> feeding_leaves;  // the nodes whose leaf edges this pass serves
    if (fills_leaves_)
      for (Node* node : order)
        if (!captured(*node)) feeding_leaves.push_back(node);
    leaves_.emplace(feeding_leaves, create_graph_);
  }

  // The sum of what node's output received, taken out of the map; undefined when it received
  // nothing (its leaves then await nothing from it) or grad() needs nothing from it.
  Tensor take_gradient(Node& node) {
    auto found = grads_.find(&node);
    if (prune_ && !needed_.count(&node)) {
      if (found != grads_.end()) grads_.erase(found);
      return Tensor();
    }
    if (found == grads_.end()) {
      if (fills_leaves_ && !captured(node)) leaves_->skip(node);
      return Tensor();
    }
    Tensor dout = std::move(found->second);
    grads_.erase(found);
    return dout;
  }

  // grad() asked for this node's output: note its gradient. True when the pass stops here
  // (backward_to: the gradient of a recomputation's input goes no further).
  bool capture(const Node& node, const Tensor& dout) {
    if (!capture_) return false;
    auto c = capture_->nodes.find(&node);
    if (c == capture_->nodes.end()) return false;
    capture_->add(c->second, dout);
    return capture_->fill_other_leaves;
  }

  // The node's backward function: dL/d output -> one dL/d input per input.
  TensorList call_backward(Node& node, const Tensor& dout) {
    profiler::Scope timed(node.name.c_str(), profiler::Phase::backward);
    // Released as soon as it has run unless the graph is retained, even when what follows
    // throws: its backward may have written over what it kept (saved_tensors_freed_after).
    struct ReleaseAfter {
      Node& node;
      bool release;
      ~ReleaseAfter() {
        if (release) node.release();
      }
    } release_after{node, !retain_graph_};
    const std::function<Tensor(std::size_t)> add_into = [&](std::size_t i) { return sum_to_add_into(node, i); };
    TensorList dinputs = node.apply(dout, !retain_graph_, &add_into);
    if (dinputs.size() != node.next_edges.size())
      throw GraphError("backward of '" + node.name + "' returned " + std::to_string(dinputs.size()) +
                       " gradients for " + std::to_string(node.next_edges.size()) + " inputs");
    return dinputs;
  }

  // Step 3's `+=`: input i's gradient joins what its producer has received (fan-out adds up),
  // or goes to its leaf.
  void accumulate(const Node& node, std::size_t i, const Tensor& g) {
    if (!node.needs_input_grad[i]) return;
    const Edge& edge = node.next_edges[i];
    if (!g.defined()) {
      if (edge.leaf) to_leaf(edge.leaf, g, &*leaves_);  // counts down what the leaf awaits
      return;
    }
    check_gradient(node, i, g);
    if (edge.node) {
      auto [slot, inserted] = grads_.try_emplace(edge.node.get(), g);
      if (!inserted) slot->second = add(slot->second, g);
    } else if (edge.leaf) {
      to_leaf(edge.leaf, g, &*leaves_);
    }
  }

 private:
  bool captured(const Node& node) const { return capture_ && capture_->nodes.count(&node); }

  // A contribution to a leaf: captured when grad() asks for it, otherwise into its .grad().
  void to_leaf(const std::shared_ptr<TensorImpl>& leaf, const Tensor& g, detail::LeafDelivery* delivery) {
    for (Capture* c : {capture_, outer_}) {
      if (!c) continue;
      if (auto found = c->leaves.find(leaf.get()); found != c->leaves.end()) {
        if (g.defined()) c->add(found->second, g);
        return;
      }
    }
    if (!fills_leaves_) return;
    if (BackwardTrace* trace = detail::active_trace()) trace->fill_leaf(leaf, g);
    if (delivery) delivery->deliver(leaf, g);
    else detail::LeafDelivery::deliver_root(leaf, g, create_graph_);
  }

  // May input i's backward add its gradient itself into where the engine would add it
  // (grad_to_add_into)? Into a leaf's .grad() only where to_leaf would add it there in
  // place; into the sum received so far by the node behind a non-leaf input (fan-out) only
  // where this pass alone holds that sum, so that no one else sees it change.
  Tensor sum_to_add_into(const Node& node, std::size_t i) {
    if (is_anomaly_enabled() || detail::active_trace() || create_graph_ || i >= node.next_edges.size() ||
        !node.needs_input_grad[i])
      return Tensor();  // a trace sees each gradient as it passes the engine
    const Edge& edge = node.next_edges[i];
    if (edge.node) return pending_sum_to_add_into(grads_, edge.node.get());
    if (!fills_leaves_ || !edge.leaf) return Tensor();
    for (const Capture* c : {capture_, outer_})
      if (c && c->leaves.count(edge.leaf.get())) return Tensor();
    return leaves_->grad_to_add_into(edge.leaf);
  }

  Capture* capture_;
  Capture* outer_ = nullptr;
  bool fills_leaves_ = true;
  bool retain_graph_;
  bool create_graph_;
  const bool prune_;  // grad(): only the nodes on a path to what it asks for run
  EnclosingPass this_pass_{nullptr};
  const EnclosingPass* previous_ = enclosing_pass;
  std::unordered_map<Node*, Tensor> grads_;  // the sum of the gradients received by each node's output
  std::unordered_set<const Node*> needed_;
  std::optional<detail::LeafDelivery> leaves_;
};

}  // namespace

// The backward pass from roots (seeded with seeds): into the leaves' .grad(), or into
// capture's gradients when capture is given (grad(), backward_to).
void detail::run_pass(const TensorList& roots, const TensorList& seeds, bool retain_graph, bool create_graph,
                      Capture* capture) {
  GradModeGuard recording(create_graph);  // off: the backward pass itself is not recorded
  BackwardPass pass(capture, retain_graph, create_graph);
  detail::TracedPass traced;  // what a BackwardTrace sees of this pass, when one is on
  const std::vector<Node*> root_nodes = pass.seed(roots, seeds);  // 2. seed dL/d root
  if (root_nodes.empty()) return;
  // 1. order: each node after every node that consumes its output, walked from the back
  const std::vector<Node*> order = topological_order(root_nodes, capture ? capture->min_sequence_nr() : 0);
  check_usable(order);  // refuse a freed graph, or a saved tensor written in place since
  traced.add_nodes(order);
  pass.plan(order);
  // 3. walk in reverse
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    Node& node = **it;
    Tensor dout = pass.take_gradient(node);  // the sum of what its output received
    if (dout.defined()) {
      dout = detail::run_node_hooks(node, std::move(dout));  // hooks see (and may replace) it
      if (!pass.capture(node, dout)) {                       // grad() asked for it; backward_to stops
        check_recordable(node, create_graph);
        const TensorList dinputs = pass.call_backward(node, dout);  // dL/dout -> dL/dinputs
        traced.visit(node, dout, dinputs);
        for (std::size_t i = 0; i < dinputs.size(); ++i) pass.accumulate(node, i, dinputs[i]);  // +=
      }
    }
    if (!retain_graph) node.release();  // 4. free the saved tensors as soon as they are used
  }
  profiler::mark();
}

void run_backward(const Tensor& root, const Tensor& grad, const BackwardOptions& options) {
  const bool retain_graph = options.create_graph || options.retain_graph.value_or(false);  // create_graph keeps it
  detail::run_pass({root}, {detail::seed_for(root, grad, "backward")}, retain_graph, options.create_graph, nullptr);
}

}  // namespace tapegrad
