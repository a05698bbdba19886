// hook_runner.cpp — running gradient hooks, and adding gradients into leaves.
#include "hook_runner.hpp"

#include "cpu/parallel.hpp"
#include "ops.hpp"

namespace tapegrad::detail {

namespace {

// leaf.grad += grad. The first contribution is adopted as it is when nothing else holds its
// tensor or its storage (as PyTorch's AccumulateGrad does); otherwise it is copied, because
// it may alias a buffer that another part of the backward pass still reads (add's backward
// returns dout for both inputs, a view shares its base's storage). Under create_graph the
// gradient keeps its graph: adopted as it is, and later contributions added out of place.
void accumulate_into_leaf(TensorImpl& leaf, const Tensor& grad, bool create_graph) {
  // Out of place when the pass is recorded, and when .grad() carries the graph of an earlier
  // create_graph pass: a tensor someone may still differentiate is never modified (PyTorch).
  if (leaf.grad && (create_graph || leaf.grad->requires_grad)) {
    leaf.grad = add(Tensor(leaf.grad), grad).impl_ptr();
    return;
  }
  if (!leaf.grad && grad.requires_grad()) {  // recorded: kept as it is, never modified in place
    leaf.grad = grad.impl_ptr();
    return;
  }
  if (!leaf.grad) {
    const bool sole_owner = grad.impl_ptr().use_count() == 1 && grad.impl().storage.use_count() == 1 &&
                            grad.is_contiguous() && !grad.requires_grad();
    leaf.grad = sole_owner ? grad.impl_ptr() : grad.clone().impl_ptr();
  } else {
    Tensor acc(leaf.grad);
    if (acc.is_contiguous() && grad.is_contiguous() && acc.dtype() == grad.dtype()) {
      // acc += grad in place: no temporary (for a tied 50257 x 768 embedding, 154 MB)
      dispatch_floating(acc.dtype(), "accumulate_grad", [&]<typename T>() {
        T* a = acc.data<T>();
        const T* g = grad.data<T>();
        const std::int64_t n = acc.numel();
        parallel_region_if(n > kParallelGrain, [&] {
#pragma omp for simd nowait
          for (std::int64_t i = 0; i < n; ++i) a[i] += g[i];
        });
      });
    } else {
      acc.copy_(add(acc, grad));
    }
  }
}

std::string describe(const std::string& label, std::size_t index, const std::string& what) {
  return (label.empty() ? "hook " + std::to_string(index + 1) : "hook '" + label + "'") + " on the gradient of " + what;
}

// grad after each hook of the list, in order.
Tensor run_grad_hooks(const HookList<GradHook>& hooks, Tensor grad, const std::string& what, const Shape& shape,
                      DType dtype) {
  const auto entries = hooks.snapshot();
  for (std::size_t i = 0; i < entries.size(); ++i) {
    Tensor replacement;
    try {
      replacement = entries[i].fn(grad);
    } catch (const std::exception& e) {
      throw GraphError(describe(entries[i].label, i, what) + " threw: " + e.what());
    }
    if (!replacement.defined()) continue;
    if (replacement.shape() != shape || replacement.dtype() != dtype)
      throw GraphError(describe(entries[i].label, i, what) + " returned a gradient of shape " +
                       shape_str(replacement.shape()) + " (" + dtype_name(replacement.dtype()) + ") for a tensor of shape " +
                       shape_str(shape) + " (" + dtype_name(dtype) + ")");
    grad = std::move(replacement);
  }
  return grad;
}

std::string leaf_name(const TensorImpl& leaf) { return "a leaf " + shape_str(leaf.shape) + " (" + dtype_name(leaf.dtype) + ")"; }

bool has_hooks(const std::shared_ptr<TensorImpl>& leaf) { return leaf && leaf->hooks && !leaf->hooks->empty(); }

}  // namespace

Tensor run_node_hooks(const Node& node, Tensor dout) {
  if (!node.grad_hooks || node.grad_hooks->empty()) return dout;
  const std::string what = "the output of '" + node.name + "' " + shape_str(node.output_shape) + " (" + dtype_name(node.dtype) + ")";
  return run_grad_hooks(*node.grad_hooks, std::move(dout), what, node.output_shape, node.dtype);
}

LeafDelivery::LeafDelivery(const std::vector<Node*>& order, bool create_graph) : create_graph_(create_graph) {
  for (const Node* node : order)
    for (std::size_t i = 0; i < node->next_edges.size(); ++i)
      if (node->needs_input_grad[i] && has_hooks(node->next_edges[i].leaf)) ++hooked_[node->next_edges[i].leaf.get()].remaining;
}

void LeafDelivery::deliver(const std::shared_ptr<TensorImpl>& leaf, const Tensor& grad) {
  auto found = hooked_.find(leaf.get());
  if (found == hooked_.end()) {  // no hooks: straight into .grad()
    if (grad.defined()) accumulate_into_leaf(*leaf, grad, create_graph_);
    return;
  }
  Pending& p = found->second;
  if (grad.defined()) p.sum = p.sum.defined() ? add(p.sum, grad) : grad;
  if (--p.remaining > 0) return;
  const Tensor sum = std::move(p.sum);
  hooked_.erase(found);
  if (sum.defined()) finish(leaf, sum, create_graph_);
}

Tensor LeafDelivery::grad_to_add_into(const std::shared_ptr<TensorImpl>& leaf) const {
  if (create_graph_ || !leaf || !leaf->grad || hooked_.count(leaf.get()) || has_hooks(leaf)) return Tensor();
  // The conditions of accumulate_into_leaf's in-place branch.
  const Tensor grad(leaf->grad);
  if (grad.requires_grad() || !grad.is_contiguous() || grad.dtype() != leaf->dtype || grad.shape() != leaf->shape)
    return Tensor();
  return grad;
}

void LeafDelivery::skip(const Node& node) {
  for (std::size_t i = 0; i < node.next_edges.size(); ++i)
    if (node.needs_input_grad[i] && node.next_edges[i].leaf) deliver(node.next_edges[i].leaf, Tensor());
}

void LeafDelivery::deliver_root(const std::shared_ptr<TensorImpl>& leaf, const Tensor& grad, bool create_graph) {
  if (has_hooks(leaf)) finish(leaf, grad, create_graph);
  else accumulate_into_leaf(*leaf, grad, create_graph);
}

void LeafDelivery::finish(const std::shared_ptr<TensorImpl>& leaf, const Tensor& sum, bool create_graph) {
  const std::shared_ptr<LeafHooks> hooks = leaf->hooks;  // a hook may register or remove others
  const std::string what = leaf_name(*leaf);
  accumulate_into_leaf(*leaf, run_grad_hooks(*hooks->grad, sum, what, leaf->shape, leaf->dtype), create_graph);
  Tensor tensor(leaf);
  const auto post = hooks->post_accumulate->snapshot();
  for (std::size_t i = 0; i < post.size(); ++i) {
    try {
      post[i].fn(tensor);
    } catch (const std::exception& e) {
      throw GraphError((post[i].label.empty() ? "post-accumulate-grad hook " + std::to_string(i + 1)
                                              : "post-accumulate-grad hook '" + post[i].label + "'") +
                       " on " + what + " threw: " + e.what());
    }
  }
}

}  // namespace tapegrad::detail
