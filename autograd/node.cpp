// node.cpp — creating nodes and attaching them to op outputs.
#include "node.hpp"

#include <atomic>

#include <cmath>
#include <string>

#include "anomaly.hpp"
#include "grad_mode.hpp"
#include "profiler.hpp"
#include "shape.hpp"

namespace tapegrad {

namespace {
std::atomic<std::uint64_t> next_sequence_nr{0};
}

Node::Node(std::string name_, std::vector<Edge> next_edges_, std::vector<bool> needs_input_grad_,
           std::vector<Shape> input_shapes_, std::vector<DType> input_dtypes_,
           Shape output_shape_, DType dtype_,
           BackwardFn backward_fn, DoubleBackward double_backward_)
    : name(std::move(name_)),
      next_edges(std::move(next_edges_)),
      needs_input_grad(std::move(needs_input_grad_)),
      input_shapes(std::move(input_shapes_)),
      input_dtypes(std::move(input_dtypes_)),
      output_shape(std::move(output_shape_)),
      dtype(dtype_),
      sequence_nr(next_sequence_nr++),
      double_backward(double_backward_),
      backward_fn_(std::move(backward_fn)) {}

Node::~Node() {
  // Take over the inputs that only this node keeps alive, and free them one by one here
  // instead of letting ~shared_ptr recurse down the whole chain.
  std::vector<std::shared_ptr<Node>> pending;
  for (Edge& e : next_edges)
    if (e.node && e.node.use_count() == 1) pending.push_back(std::move(e.node));
  while (!pending.empty()) {
    std::shared_ptr<Node> node = std::move(pending.back());
    pending.pop_back();
    for (Edge& e : node->next_edges)
      if (e.node && e.node.use_count() == 1) pending.push_back(std::move(e.node));
  }  // `node` dies here with no input left to recurse into
}

namespace {
thread_local bool* requires_grad_seen = nullptr;  // the live RequiresGradProbe's flag
thread_local const Node* running = nullptr;       // the node whose backward function runs
thread_local bool running_frees_saved = false;    // ... and whether its saved tensors go right after
thread_local const std::function<Tensor(std::size_t)>* running_add_into = nullptr;  // ... and the engine's offer (grad_to_add_into)
}

TensorList Node::apply(const Tensor& dout, bool frees_saved, const std::function<Tensor(std::size_t)>* add_into) const {
  struct Running {  // nested: a checkpoint's backward runs a whole backward pass inside
    const Node* previous;
    bool previous_frees;
    const std::function<Tensor(std::size_t)>* previous_add_into;
    Running(const Node* n, bool frees, const std::function<Tensor(std::size_t)>* add)
        : previous(running), previous_frees(running_frees_saved), previous_add_into(running_add_into) {
      running = n;
      running_frees_saved = frees;
      running_add_into = add;
    }
    ~Running() {
      running = previous;
      running_frees_saved = previous_frees;
      running_add_into = previous_add_into;
    }
  } scope(this, frees_saved, add_into);
  return backward_fn_(dout);
}

bool saved_tensors_freed_after() { return running != nullptr && running_frees_saved; }

Tensor grad_to_add_into(std::size_t input) {
  if (!running || !running_add_into) return Tensor();
  return (*running_add_into)(input);
}

Tensor saved_output_with_graph(const Tensor& saved) {
  if (!running) throw GraphError("saved_output_with_graph: called outside a backward function");
  auto impl = std::make_shared<TensorImpl>();
  const TensorImpl& src = saved.impl();
  impl->storage = src.storage;
  impl->offset = src.offset;
  impl->shape = src.shape;
  impl->strides = src.strides;
  impl->dtype = src.dtype;
  impl->requires_grad = true;
  impl->grad_fn = std::const_pointer_cast<Node>(running->shared_from_this());
  return Tensor(std::move(impl));
}

Tensor saved_output(const Tensor& saved) { return is_grad_enabled() ? saved_output_with_graph(saved) : saved; }

detail::RequiresGradProbe::RequiresGradProbe() : previous_(requires_grad_seen) { requires_grad_seen = &seen_; }
detail::RequiresGradProbe::~RequiresGradProbe() { requires_grad_seen = previous_; }

bool should_record(const TensorList& inputs) {
  if (!is_grad_enabled()) {
    if (requires_grad_seen && !*requires_grad_seen)
      for (const Tensor& t : inputs)
        if (t.defined() && t.requires_grad()) *requires_grad_seen = true;
    return false;
  }
  for (const Tensor& t : inputs)
    if (t.defined() && t.requires_grad()) return true;
  return false;
}

namespace {
void save_version(std::vector<SavedVersion>& versions, const Tensor& t, int input) {
  if (t.defined() && t.impl().storage)
    versions.push_back(SavedVersion{t.impl().storage, t.impl().storage->version(), input});
}
}  // namespace

void Node::check_saved_versions() const {
  for (const SavedVersion& saved : saved_versions) {
    const std::shared_ptr<Storage> storage = saved.storage.lock();
    if (!storage || storage->version() == saved.version) continue;
    const std::string which = saved.input < 0 ? "its output" : "its input " + std::to_string(saved.input);
    const Shape& shape = saved.input < 0 ? output_shape : input_shapes[static_cast<std::size_t>(saved.input)];
    throw GraphError("backward of '" + name + "'" + (module_path.empty() ? "" : " (module '" + module_path + "')") +
                     ": one of the tensors it saved for the gradient has been modified by an in-place operation: " +
                     which + " (shape " + shape_str(shape) + ") is at version " +
                     std::to_string(storage->version()) + "; expected version " + std::to_string(saved.version) +
                     ". The gradient would be computed from the new values. Write into a clone() instead, or step "
                     "the optimizer only after every backward that goes through its parameters (in a GAN loop: "
                     "the generator's backward before the discriminator's step)");
  }
}

void record(Tensor& out, const char* name, const TensorList& inputs, BackwardFn backward, DoubleBackward double_backward,
            Saves saves) {
  std::vector<Edge> edges(inputs.size());
  std::vector<bool> needs(inputs.size(), false);
  std::vector<Shape> shapes(inputs.size());
  std::vector<DType> dtypes(inputs.size(), DType::float32);
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    const Tensor& t = inputs[i];
    if (!t.defined()) continue;
    shapes[i] = t.shape();
    dtypes[i] = t.dtype();
    if (!t.requires_grad()) continue;
    needs[i] = true;
    if (t.grad_fn())
      edges[i].node = t.grad_fn();
    else
      edges[i].leaf = t.impl_ptr();
  }
  TensorImpl& impl = out.impl();
  impl.grad_fn = std::make_shared<Node>(name, std::move(edges), std::move(needs), std::move(shapes),
                                        std::move(dtypes), impl.shape, impl.dtype, std::move(backward), double_backward);
  impl.requires_grad = true;
  // The versions of what the backward keeps, to refuse a backward after an in-place write.
  std::vector<SavedVersion>& versions = impl.grad_fn->saved_versions;
  if (saves != Saves::nothing) versions.reserve(inputs.size() + 1);
  if (saves == Saves::inputs_and_output || saves == Saves::inputs)
    for (std::size_t i = 0; i < inputs.size(); ++i)
      save_version(versions, inputs[i], static_cast<int>(i));
  if (saves == Saves::inputs_and_output || saves == Saves::output) save_version(versions, out, -1);
  profiler::forward_op_done(name);
  if (is_anomaly_enabled()) {
    impl.grad_fn->module_path = current_module_path();
    if (has_non_finite(out))
      throw AnomalyError("anomaly: forward of '" + std::string(name) + "'" +
                         (current_module_path().empty() ? "" : " in module '" + current_module_path() + "'") +
                         " produced NaN/Inf (output shape " + shape_str(impl.shape) + ")");
  }
}

bool has_non_finite(const Tensor& t) {
  if (!is_floating(t.dtype())) return false;
  bool bad = false;
  dispatch_floating(t.dtype(), "has_non_finite", [&]<typename T>() {
    const T* p = t.data<T>();
    for_each_strided(t.shape(), t.strides(), [&](std::int64_t, std::int64_t off) { bad = bad || !std::isfinite(p[off]); });
  });
  return bad;
}

}  // namespace tapegrad
