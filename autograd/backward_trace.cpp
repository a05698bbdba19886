// backward_trace.cpp — the trace's bookkeeping and its text.
#include "backward_trace.hpp"

#include <cmath>
#include <cstdio>
#include <limits>

#include "grad_mode.hpp"
#include "node.hpp"
#include "ops.hpp"

namespace tapegrad {

namespace {

thread_local BackwardTrace* active = nullptr;

// ||g||, the Frobenius norm, in double whatever g's dtype; not recorded, even under create_graph.
double norm_of(const Tensor& g) {
  NoGradGuard no_grad;
  return std::sqrt(sum(mul(g, g)).item());
}

std::string number(double v) {
  if (std::isnan(v)) return "-";
  char text[32];
  std::snprintf(text, sizeof text, "%.4g", v);
  return text;
}

}  // namespace

BackwardTrace* detail::active_trace() { return active; }

BackwardTrace::BackwardTrace() : previous_(active) { active = this; }
BackwardTrace::~BackwardTrace() { active = previous_; }

void BackwardTrace::name(const Tensor& leaf, std::string name) {
  names_[leaf.impl_ptr().get()] = name;
  if (auto found = leaf_ids_.find(leaf.impl_ptr().get()); found != leaf_ids_.end()) leaves_[found->second].name = name;
}

int BackwardTrace::leaf_index(const std::shared_ptr<TensorImpl>& leaf) {
  auto [slot, inserted] = leaf_ids_.try_emplace(leaf.get(), static_cast<int>(leaves_.size()));
  if (inserted) {
    const auto named = names_.find(leaf.get());
    const std::string name = named != names_.end() ? named->second : "leaf " + std::to_string(leaves_.size() + 1);
    leaves_.push_back({name, leaf->shape});
    kept_leaves_.push_back(leaf);
  }
  return slot->second;
}

int BackwardTrace::node_index(Node& node) {
  auto [slot, inserted] = node_ids_.try_emplace(&node, static_cast<int>(nodes_.size()));
  if (inserted) {
    nodes_.push_back({node.name, node.output_shape, {}, node.module_path});
    kept_nodes_.push_back(node.shared_from_this());
  }
  return slot->second;
}

void BackwardTrace::add_nodes(const std::vector<Node*>& order) {
  // order lists each node before its users (the engine walks it from the back): the nodes
  // come in an order they could have run forward, an input's node numbered before its user
  for (Node* n : order) {
    Node& node = *n;
    const int index = node_index(node);
    if (!nodes_[index].inputs.empty()) continue;  // seen in an earlier pass
    std::vector<TraceInput> inputs;
    for (std::size_t i = 0; i < node.next_edges.size(); ++i) {
      const Edge& edge = node.next_edges[i];
      TraceInput in;
      in.shape = node.input_shapes[i];
      if (edge.node) in.node = node_index(*edge.node);
      else if (edge.leaf) in.leaf = leaf_index(edge.leaf);
      inputs.push_back(in);
    }
    nodes_[index].inputs = std::move(inputs);  // node_index may have grown nodes_ meanwhile
  }
}

void BackwardTrace::visit(Node& node, const Tensor& dout, const TensorList& dinputs) {
  TraceStep step;
  step.pass = open_passes_.back();
  step.node = node_index(node);
  step.grad_in = norm_of(dout);
  for (std::size_t i = 0; i < dinputs.size(); ++i)  // the engine drops what an input that needs none gets
    step.grad_out.push_back(dinputs[i].defined() && node.needs_input_grad[i] ? norm_of(dinputs[i])
                                                                             : std::numeric_limits<double>::quiet_NaN());
  steps_.push_back(std::move(step));
}

void BackwardTrace::fill_leaf(const std::shared_ptr<TensorImpl>& leaf, const Tensor& grad) {
  if (!grad.defined()) return;  // a node that sent it nothing
  TraceStep step;
  step.pass = open_passes_.back();
  step.leaf = leaf_index(leaf);
  step.grad_in = norm_of(grad);
  steps_.push_back(std::move(step));
}

std::string BackwardTrace::node_label(int node) const {
  const TraceNode& n = nodes_.at(static_cast<std::size_t>(node));
  return "#" + std::to_string(node + 1) + " " + n.op + " " + shape_str(n.output_shape);
}

std::string BackwardTrace::leaf_label(int leaf) const {
  const TraceLeaf& l = leaves_.at(static_cast<std::size_t>(leaf));
  return (l.name.rfind("leaf ", 0) == 0 ? l.name : "leaf " + l.name) + " " + shape_str(l.shape);
}

std::string BackwardTrace::step_text(std::size_t s) const {
  const TraceStep& step = steps_.at(s);
  std::string out = "step " + std::to_string(s + 1) + "  ";
  if (step.leaf >= 0) return out + leaf_label(step.leaf) + "  .grad += " + number(step.grad_in);
  const TraceNode& n = nodes_[static_cast<std::size_t>(step.node)];
  out += node_label(step.node) + "  dL/dout " + number(step.grad_in) + "  ->";
  for (std::size_t i = 0; i < n.inputs.size(); ++i) {
    const TraceInput& in = n.inputs[i];
    const std::string to = in.node >= 0   ? "#" + std::to_string(in.node + 1) + " " + nodes_[static_cast<std::size_t>(in.node)].op
                           : in.leaf >= 0 ? leaf_label(in.leaf)
                                          : "constant " + shape_str(in.shape);
    out += (i ? ",  " : "  ") + to + " " + number(i < step.grad_out.size() ? step.grad_out[i] : NAN);
  }
  return out;
}

std::string BackwardTrace::text() const {
  std::string out;
  int pass = -1;
  for (std::size_t s = 0; s < steps_.size(); ++s) {
    if (steps_[s].pass != pass) {
      pass = steps_[s].pass;
      out += "backward pass " + std::to_string(pass + 1) + "\n";
    }
    out += step_text(s) + "\n";
  }
  return out;
}

}  // namespace tapegrad
