// backward_trace.hpp — watch the backward pass: every node as the engine visits it.
//
//   BackwardTrace trace;                     // on, on this thread, while it lives
//   trace.name(w, "w");                      // optional: the names its text gives the leaves
//   loss.backward();
//   std::cout << trace.text();               // one line per node visited, one per leaf filled
//
// examples/common/trace_page.hpp replays a trace on the graph's picture, in a page a browser opens
// offline (autodiff_tour --trace writes one).
//
// A step of the trace is what the engine does at one node (engine.cpp's step 3): it takes
// the sum of the gradients that the node's output received, dL/d(output), and its backward
// function turns it into one dL/d(input) per input. The trace keeps the norm of each: the one
// coming in, and the ones going out to each input (to the node that made it, or to a leaf).
// A leaf's step is a contribution added into its .grad() (engine.cpp's step 4): a leaf used
// twice gets two steps, and its .grad() is their sum. Why norms and not the tensors: they
// show where a gradient grows or vanishes without keeping a copy of every gradient.
//
// What tracing changes: nothing in the numbers. A backward function does not add its gradient
// straight into a leaf's .grad() while a trace is on (grad_to_add_into, node.hpp), so that every
// gradient passes the engine, where the trace sees it; the sum comes out bit for bit the same.
// The trace keeps the nodes it saw alive (their inputs' shapes, their edges), not their saved
// tensors: a graph freed by its backward stays freed.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "tensor.hpp"

namespace tapegrad {

// One input of a traced node: a node (its index in nodes()), a leaf (in leaves()), or neither
// (a constant: an input that needs no gradient).
struct TraceInput {
  int node = -1;
  int leaf = -1;
  Shape shape;
};

struct TraceNode {
  std::string op;  // the node's name: "mul", "matmul", ...
  Shape output_shape;
  std::vector<TraceInput> inputs;  // in argument order
  std::string module_path;         // the module that ran it (anomaly mode only, else empty)
};

struct TraceLeaf {
  std::string name;  // trace.name(...)'s, or "leaf" followed by its number
  Shape shape;
};

struct TraceStep {
  int pass = 0;    // which backward pass of the trace's lifetime (0, 1, ...)
  int node = -1;   // the node whose backward ran (index in nodes()) ...
  int leaf = -1;   // ... or the leaf whose .grad() received a contribution (index in leaves())
  double grad_in = 0;  // node: ||dL/d output||; leaf: ||the contribution||
  // node: ||dL/d input i|| for each input; NaN where none flows (a constant, or a backward
  // that returns none for it)
  std::vector<double> grad_out;
};

class BackwardTrace {
 public:
  BackwardTrace();  // on until destroyed; traces nest (the inner one sees the passes meanwhile)
  ~BackwardTrace();
  BackwardTrace(const BackwardTrace&) = delete;
  BackwardTrace& operator=(const BackwardTrace&) = delete;

  // The name a leaf is shown with, instead of "leaf 3".
  void name(const Tensor& leaf, std::string name);

  const std::vector<TraceNode>& nodes() const { return nodes_; }  // in the order they ran forward
  const std::vector<TraceLeaf>& leaves() const { return leaves_; }
  const std::vector<TraceStep>& steps() const { return steps_; }
  int passes() const { return passes_; }

  // What the node or the leaf of a step is called in text(): "#3 mul [2, 3]", "leaf w [3]".
  std::string node_label(int node) const;
  std::string leaf_label(int leaf) const;
  // Step s (from 0) in words, numbered from 1 as the engine took them; a norm is "-" where no
  // gradient flows:
  //   step 2  #5 tanh [2, 3]  dL/dout 0.4082  ->  #4 add 0.4082
  //   step 4  leaf w [3]  .grad += 0.1174
  std::string step_text(std::size_t s) const;
  // Every step's text, one per line, each pass under a "backward pass N" line.
  std::string text() const;

  // The engine's side (engine.cpp, through detail::TracedPass): a pass starts, will walk
  // these nodes, and ends; a node's backward ran; a contribution went into a leaf's .grad().
  void begin_pass() { open_passes_.push_back(passes_++); }
  void add_nodes(const std::vector<Node*>& order);
  void end_pass() { open_passes_.pop_back(); }
  void visit(Node& node, const Tensor& dout, const TensorList& dinputs);
  void fill_leaf(const std::shared_ptr<TensorImpl>& leaf, const Tensor& grad);

 private:
  int node_index(Node& node);
  int leaf_index(const std::shared_ptr<TensorImpl>& leaf);

  std::vector<TraceNode> nodes_;
  std::vector<TraceLeaf> leaves_;
  std::vector<TraceStep> steps_;
  int passes_ = 0;
  std::vector<int> open_passes_;  // a checkpoint's recomputation runs a pass inside a pass
  std::unordered_map<const Node*, int> node_ids_;
  std::unordered_map<const TensorImpl*, int> leaf_ids_;
  // kept alive, so that an address the trace knows is never another node's or leaf's
  std::vector<std::shared_ptr<Node>> kept_nodes_;
  std::vector<std::shared_ptr<TensorImpl>> kept_leaves_;
  std::unordered_map<const TensorImpl*, std::string> names_;
  BackwardTrace* previous_;
};

namespace detail {
// The trace on this thread (the innermost BackwardTrace alive), or null: the engine's one check.
BackwardTrace* active_trace();

// One backward pass as the trace sees it, when a trace is on (otherwise it does nothing).
class TracedPass {
 public:
  TracedPass() : trace_(active_trace()) {
    if (trace_) trace_->begin_pass();
  }
  ~TracedPass() {
    if (trace_) trace_->end_pass();
  }
  TracedPass(const TracedPass&) = delete;
  TracedPass& operator=(const TracedPass&) = delete;
  void add_nodes(const std::vector<Node*>& order) {
    if (trace_) trace_->add_nodes(order);
  }
  void visit(Node& node, const Tensor& dout, const TensorList& dinputs) {
    if (trace_) trace_->visit(node, dout, dinputs);
  }

 private:
  BackwardTrace* trace_;
};
}  // namespace detail

}  // namespace tapegrad
