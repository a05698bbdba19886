// node.hpp — one recorded operation of the tape.
//
// When an op runs on inputs that require grad (and grad mode is on), it attaches a Node to
// its output: the op's name, an edge to each input (the input's own Node, or the leaf
// tensor whose .grad() to fill), which inputs need a gradient, and a backward function.
// The backward function maps dL/d(output) to one dL/d(input) per input (undefined for
// inputs that need none). It captures exactly what it needs from the forward pass; those
// captures are the node's "saved tensors", freed by release() after backward.
//
// Rules for op authors:
//  - Capture inputs as they are (not detached): the node keeps their nodes alive through its
//    edges anyway, and a backward computed with ops on them is then differentiable when the
//    backward pass is recorded (create_graph).
//  - Capture the node's own output with .detach(): a node that held its output with the
//    grad_fn attached would keep itself alive forever (a reference cycle). Inside the backward,
//    saved_output(y) gives it back with the graph attached when the pass is recorded.
//  - Say in record() which tensors the backward keeps (Saves): the engine refuses a backward
//    after one of them was written in place, and lets through writes into the others.
//  - A backward written with differentiable ops is marked DoubleBackward::supported; one that
//    runs a raw kernel computes the differentiable formula instead when is_grad_enabled() is
//    true inside it (that is, under create_graph), or stays unsupported and create_graph
//    refuses it by name.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "tensor.hpp"

namespace tapegrad {

using BackwardFn = std::function<TensorList(const Tensor& dout)>;
// Forward mode (forward_ad.hpp): the op's Jacobian-vector rule, d(output) from one tangent per
// input (an undefined tangent, or an undefined result, is zeros).
using ForwardFn = std::function<Tensor(const TensorList& tangents)>;

// Where the gradient for one input goes: into another node, or into a leaf's .grad().
struct Edge {
  std::shared_ptr<Node> node;         // the input was produced by this op
  std::shared_ptr<TensorImpl> leaf;   // or the input is a leaf that requires grad
};

// Which of an op's tensors its backward keeps, so that a backward pass can refuse to run on one
// written in place since (PyTorch's saved-variable version check). Say exactly what the backward
// keeps: an op that keeps nothing (add, the views) must not refuse a program that writes into
// its input afterwards, and one that keeps its output (softmax, exp) must refuse a write into it.
enum class Saves { inputs_and_output, inputs, output, nothing };

// What a node remembers of one tensor its backward keeps: the version of the tensor's Storage
// when it was saved. The storage is not kept alive by it (a weak pointer): a tensor freed since
// cannot have been written.
struct SavedVersion {
  std::weak_ptr<Storage> storage;
  std::uint64_t version = 0;
  int input = -1;  // the input's position, or -1 for the node's own output
};

// Whether an op's backward is written with differentiable ops, so that a backward pass with
// create_graph records it and a second derivative can flow through it (docs/higher-order.md).
enum class DoubleBackward { unsupported, supported };

class Node : public std::enable_shared_from_this<Node> {
 public:
  Node(std::string name, std::vector<Edge> next_edges, std::vector<bool> needs_input_grad,
       std::vector<Shape> input_shapes, std::vector<DType> input_dtypes, Shape output_shape,
       DType dtype, BackwardFn backward_fn, DoubleBackward double_backward = DoubleBackward::unsupported);
  // Frees a long chain of nodes iteratively (a recursive chain of destructors would
  // overflow the stack on very deep graphs).
  ~Node();

  const std::string name;                 // "mul", "matmul", ... (micrograd's _op)
  std::vector<Edge> next_edges;           // one per input, in argument order
  const std::vector<bool> needs_input_grad;
  const std::vector<Shape> input_shapes;  // for error messages and print_graph
  const std::vector<DType> input_dtypes;  // each input's gradient must have its input's dtype
  const Shape output_shape;
  const DType dtype;                      // of the output
  const std::uint64_t sequence_nr;        // order of execution in the forward pass
  std::string module_path;                // the module that ran the op (anomaly mode only)
  // checkpoint: the backward reaches leaves that are not among the node's inputs (the
  // parameters used inside the function), so grad() must not prune it for lack of an edge.
  bool reaches_hidden_leaves = false;
  const DoubleBackward double_backward;   // may run under create_graph
  // The versions of the tensors the backward keeps, taken when the op ran (record()).
  std::vector<SavedVersion> saved_versions;
  // The op's forward rule, set by record_forward while jvp() records; null otherwise.
  ForwardFn forward_fn;
  // Hooks on the gradient of this node's output (Tensor::register_hook on a non-leaf); null until one is registered.
  std::shared_ptr<HookList<GradHook>> grad_hooks;

  bool released() const { return !backward_fn_; }
  // Throws GraphError when a tensor the backward keeps was written in place since the op ran
  // (copy_, fill_, an optimizer step): the gradient would be computed from the new values.
  void check_saved_versions() const;
  // Drops the saved tensors. A second backward through this node then raises GraphError.
  void release() { backward_fn_ = nullptr; }
  // Runs the backward function (saved_output_with_graph then knows which node runs).
  // frees_saved: the caller releases this node right after (saved_tensors_freed_after()).
  // add_into: the engine's answer to grad_to_add_into(input) while the function runs.
  TensorList apply(const Tensor& dout, bool frees_saved = false,
                   const std::function<Tensor(std::size_t)>* add_into = nullptr) const;

 private:
  BackwardFn backward_fn_;
};

// True when grad mode is on and at least one input requires grad: the op must record.
bool should_record(const TensorList& inputs);

namespace detail {
// While one lives (on this thread), it notes whether an op ran on a tensor that requires grad
// with grad mode off: checkpoint() runs its function unrecorded and must know whether the
// result depends on anything that wants a gradient (parameters inside the function count).
class RequiresGradProbe {
 public:
  RequiresGradProbe();
  ~RequiresGradProbe();
  RequiresGradProbe(const RequiresGradProbe&) = delete;
  RequiresGradProbe& operator=(const RequiresGradProbe&) = delete;
  bool seen() const { return seen_; }

 private:
  bool seen_ = false;
  bool* previous_;
};
}  // namespace detail

// True when any element is NaN or ±Inf (float dtypes; int64 never).
bool has_non_finite(const Tensor& t);

// Makes `out` the non-leaf output of a new Node named `name` over `inputs`.
// Call only when should_record(inputs) is true. An op whose backward computes with
// differentiable ops on what it saved (and so may run under create_graph) says
// DoubleBackward::supported; a backward pass with create_graph refuses the others.
// `saves` says which tensors the backward keeps (above); the default assumes all of them, the
// safe choice for an op that does not say.
void record(Tensor& out, const char* name, const TensorList& inputs, BackwardFn backward,
            DoubleBackward double_backward = DoubleBackward::unsupported, Saves saves = Saves::inputs_and_output);

// True while jvp() records its function (forward_ad.cpp): only then do ops keep a forward rule.
bool forward_rules_wanted();

// After record(out, ...): the op's forward rule, d(out) = rule(tangents of its inputs), written
// with differentiable ops beside the op's backward. Call it as
//   if (forward_rules_wanted()) record_forward(out, [x](const TensorList& t) { ... });
// so that outside a jvp the rule's captures (tensors, shapes) are not even copied: a training
// step pays one load of a thread-local flag per op. A no-op when out was not recorded.
template <typename F>
void record_forward(const Tensor& out, F&& rule) {
  if (out.grad_fn()) out.grad_fn()->forward_fn = ForwardFn(std::forward<F>(rule));
}

// Inside a backward function: a tensor with the data of `saved` (a .detach() of the node's own
// output, saved by its forward) and, as grad_fn, the node being run — the output as part of
// the graph again, so that a backward written with it is differentiable through this node
// (what a saved output needs under create_graph). Throws outside a backward function.
Tensor saved_output_with_graph(const Tensor& saved);
// saved_output_with_graph(saved) when the backward pass is recorded (grad mode on inside a
// backward function), otherwise saved itself.
Tensor saved_output(const Tensor& saved);
// Inside a backward function: true when the pass frees the node's saved tensors as soon as the
// function returns (the graph is not retained). A backward may then write over a tensor that
// it alone keeps, instead of taking a new buffer: gelu_mlp writes GELU's output over fc1's.
bool saved_tensors_freed_after();
// Inside a backward function: a tensor the function may add its gradient for input `input`
// straight into, returning an undefined tensor for that input; otherwise (and outside a
// backward) an undefined tensor. Two cases:
// - input is a leaf: its .grad(), where the engine would have added the returned gradient into
//   it in place anyway: no hooks wait for the pass's sum, the pass is not recorded
//   (create_graph), no grad() captures the leaf, anomaly mode is off, and .grad() is a plain
//   contiguous buffer. Why: a gradient that touches few rows of a big leaf, as an embedding's
//   (256 token rows of a 50257 x 768 table that the head shares), would otherwise be made
//   dense, zeros and all, and then added: two passes over the whole table for a few rows'
//   worth of work.
// - input is a non-leaf whose output already received a gradient from another of its users
//   (fan-out): the sum so far, where the engine alone holds it (not recorded, anomaly mode
//   off). Why: a pre-LN block's input feeds both the residual add and the LayerNorm, and the
//   add's gradient arrives first; LayerNorm's backward adds its dx into it as it computes it,
//   where the engine would have added the two afterwards (a pass that reads both and writes a
//   third tensor of the stream's size, for every norm).
// Either way the result is the engine's own sum, bit for bit, when the function adds its
// gradient g as into[i] + g.
Tensor grad_to_add_into(std::size_t input);

}  // namespace tapegrad
