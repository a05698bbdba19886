// hook_runner.hpp — how run_backward (engine.cpp) calls the hooks of hooks.hpp and fills the
// leaves' .grad(). Internal to the engine; users register hooks through Tensor.
//
// A leaf without hooks gets each contribution added to its .grad() as it comes (the fast
// path). A leaf with hooks first gets the contributions of the whole pass summed: the engine
// counts, before the walk, how many its edges will bring; when the last has come, the hooks
// see the sum (and may replace it), it goes into .grad(), and the post-accumulate-grad hooks
// run. A node that receives no gradient still counts down the leaves it would have fed.
#pragma once

#include <memory>
#include <unordered_map>
#include <vector>

#include "node.hpp"

namespace tapegrad::detail {

// dout after the hooks registered on the node's output, in order (each may replace it; a
// replacement of another shape or dtype, or a hook that throws, is a GraphError naming both).
Tensor run_node_hooks(const Node& node, Tensor dout);

class LeafDelivery {
 public:
  // Counts what each leaf with hooks will receive from the nodes of one backward pass. With
  // create_graph, .grad() keeps the graph of what it receives (sums are recorded, not in place).
  LeafDelivery(const std::vector<Node*>& order, bool create_graph);
  // A contribution to leaf (undefined: the edge's node produced none for it).
  void deliver(const std::shared_ptr<TensorImpl>& leaf, const Tensor& grad);
  // A node that received no gradient: its leaves get nothing from it.
  void skip(const Node& node);
  // The whole gradient of a leaf that is the root of the backward pass.
  static void deliver_root(const std::shared_ptr<TensorImpl>& leaf, const Tensor& grad, bool create_graph);
  // leaf's .grad() when a backward function may add its contribution into it itself
  // (grad_to_add_into): deliver would add it there in place, and no hook waits for it.
  // Otherwise an undefined tensor.
  Tensor grad_to_add_into(const std::shared_ptr<TensorImpl>& leaf) const;

 private:
  struct Pending {
    Tensor sum;
    std::int64_t remaining = 0;
  };
  static void finish(const std::shared_ptr<TensorImpl>& leaf, const Tensor& sum, bool create_graph);
  std::unordered_map<TensorImpl*, Pending> hooked_;
  bool create_graph_;
};

}  // namespace tapegrad::detail
