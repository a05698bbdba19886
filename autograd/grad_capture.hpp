// grad_capture.hpp — what grad() asks a backward pass for, and where that pass sends what it
// finds. Internal to the engine (engine.cpp runs the pass, grad_capture.cpp builds the request).
//
// backward() fills every leaf's .grad(). torch.autograd.grad instead returns the gradients of
// the tensors it names (leaves or not), fills no .grad(), and runs only the nodes on a path to
// them. A recomputation's pass (checkpoint, backward_to) is a third kind: it stops at the
// aliases it recomputed from and hands every other leaf to the pass it runs inside.
#pragma once

#include <cstdint>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "node.hpp"

namespace tapegrad::detail {

// The gradients one pass is asked for, by position: of some leaves and some non-leaves.
struct Capture {
  std::unordered_map<const TensorImpl*, std::size_t> leaves;
  std::unordered_map<const Node*, std::size_t> nodes;
  TensorList grads;
  // backward_to: the leaves not asked about still get their .grad() filled.
  bool fill_other_leaves = false;
  void add(std::size_t i, const Tensor& g);
  // A node consumes tensors made before it, so every node on a path to a captured node was
  // made after it: when only non-leaves are asked about, the search stops at nodes older than
  // the oldest of them (PyTorch prunes by the same rule). Without it, a grad() inside a
  // backward function would walk the whole graph below the tensors it asks about.
  std::uint64_t min_sequence_nr() const;
};

// The capture of `inputs` (each must require grad; `who` names the caller in errors).
Capture capture_of(const TensorList& inputs, const char* who);
// The nodes from which a captured tensor can be reached: the only ones grad() must run.
std::unordered_set<const Node*> nodes_leading_to(const std::vector<Node*>& order, const Capture& c);

// dL/d root, checked against the root: the given one, or 1 for a one-element root.
Tensor seed_for(const Tensor& root, const Tensor& grad, const char* who);
// The backward pass from roots (seeded with seeds): into the leaves' .grad(), or into
// capture's gradients when capture is given (engine.cpp).
void run_pass(const TensorList& roots, const TensorList& seeds, bool retain_graph, bool create_graph, Capture* capture);

}  // namespace tapegrad::detail
