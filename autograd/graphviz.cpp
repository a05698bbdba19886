// graphviz.cpp — walks the nodes behind a tensor for printing and for DOT export.
#include "graphviz.hpp"

#include <algorithm>
#include <map>
#include <sstream>
#include <vector>

#include "engine.hpp"
#include "node.hpp"

namespace tapegrad {

namespace {

// Every node reachable from root, sorted by sequence number (the order they ran).
std::vector<const Node*> nodes_in_execution_order(const Tensor& root) {
  if (!root.defined() || !root.grad_fn()) return {};
  const std::vector<Node*> reachable = topological_order(root.grad_fn().get());
  std::vector<const Node*> nodes(reachable.begin(), reachable.end());
  std::sort(nodes.begin(), nodes.end(),
            [](const Node* a, const Node* b) { return a->sequence_nr < b->sequence_nr; });
  return nodes;
}

// "[1.0000, 2.0000]" for small tensors, "" otherwise.
std::string small_values(const Tensor& t) {
  if (t.numel() > 4) return "";
  std::ostringstream os;
  os.precision(4);
  os << '[';
  const std::vector<double> v = t.to_vector();
  for (std::size_t i = 0; i < v.size(); ++i) os << (i ? ", " : "") << v[i];
  os << ']';
  return os.str();
}

}  // namespace

std::string graph_string(const Tensor& root) {
  const std::vector<const Node*> nodes = nodes_in_execution_order(root);
  if (nodes.empty()) return "(no recorded ops: the tensor is a leaf)\n";
  // Number nodes 1..n in execution order so the listing reads top to bottom.
  std::map<const Node*, std::size_t> number;
  for (std::size_t i = 0; i < nodes.size(); ++i) number[nodes[i]] = i + 1;
  std::ostringstream os;
  for (const Node* node : nodes) {
    os << '#' << number[node] << ' ' << node->name << ' ' << shape_str(node->output_shape) << " <- ";
    for (std::size_t i = 0; i < node->next_edges.size(); ++i) {
      if (i) os << ", ";
      const Edge& e = node->next_edges[i];
      if (e.node)
        os << '#' << number[e.node.get()] << ' ' << e.node->name;
      else if (e.leaf)
        os << "leaf " << shape_str(node->input_shapes[i]) << " (requires grad)";
      else
        os << "constant " << shape_str(node->input_shapes[i]);
    }
    if (node->released()) os << "  [saved tensors freed]";
    os << '\n';
  }
  return os.str();
}

std::string to_dot(const Tensor& root) {
  std::ostringstream os;
  os << "digraph tapegrad {\n  rankdir=LR;\n  node [fontname=\"Helvetica\"];\n";
  const std::vector<const Node*> nodes = nodes_in_execution_order(root);
  std::map<const void*, std::string> ids;
  auto id_of = [&](const void* p) {
    auto [it, inserted] = ids.try_emplace(p, "n" + std::to_string(ids.size()));
    return it->second;
  };
  // Leaves: a record "shape | data | grad" like micrograd's value boxes.
  auto leaf_label = [](const Tensor& leaf) {
    std::string label = "{leaf " + shape_str(leaf.shape());
    const std::string data = small_values(leaf);
    if (!data.empty()) label += " | data " + data;
    if (leaf.grad().defined()) label += " | grad " + small_values(leaf.grad());
    return label + "}";
  };
  for (const Node* node : nodes) {
    os << "  " << id_of(node) << " [shape=box, style=rounded, label=\"" << node->name << "\\n"
       << shape_str(node->output_shape) << "\"];\n";
    for (std::size_t i = 0; i < node->next_edges.size(); ++i) {
      const Edge& e = node->next_edges[i];
      if (e.node) {
        os << "  " << id_of(e.node.get()) << " -> " << id_of(node) << ";\n";
      } else if (e.leaf) {
        const bool first = !ids.count(e.leaf.get());
        const std::string leaf_id = id_of(e.leaf.get());
        if (first)
          os << "  " << leaf_id << " [shape=record, label=\"" << leaf_label(Tensor(e.leaf)) << "\"];\n";
        os << "  " << leaf_id << " -> " << id_of(node) << ";\n";
      }
    }
  }
  if (root.defined() && root.is_leaf())
    os << "  " << id_of(root.impl_ptr().get()) << " [shape=record, label=\"" << leaf_label(root)
       << "\"];\n";
  os << "}\n";
  return os.str();
}

}  // namespace tapegrad
