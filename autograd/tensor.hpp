// tensor.hpp — Tensor: a cheap, shared handle to an n-dimensional array that can record
// the operations applied to it, so that backward() can compute gradients.
//
// Copying a Tensor aliases the data (as in PyTorch): `Tensor b = a;` is the same array.
// Layout is row-major with explicit element strides, so views (transpose, narrow, ...)
// share storage without copying. What a Tensor is not: a lazy expression, or a GPU array.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <memory>
#include <string>
#include <vector>

#include "dtype.hpp"
#include "errors.hpp"
#include "grad_options.hpp"
#include "hooks.hpp"
#include "shape.hpp"
#include "storage.hpp"

namespace tapegrad {

class Node;
class Generator;
struct Recipe;

// The state behind a Tensor handle. Users never touch it directly.
struct TensorImpl {
  std::shared_ptr<Storage> storage;
  std::int64_t offset = 0;  // in elements, into storage
  Shape shape;
  Shape strides;  // in elements
  DType dtype = DType::float32;
  bool requires_grad = false;
  std::shared_ptr<TensorImpl> grad;  // accumulated gradient of a leaf (null until backward)
  std::shared_ptr<Node> grad_fn;     // the op that produced this tensor (null for leaves)
  std::shared_ptr<LeafHooks> hooks;  // a leaf's hooks (null until one is registered)
  // How to make this tensor again from what its grad_fn keeps anyway (saved_tensor.hpp): set by
  // cheap ops (the norms), so that an op that needs it in its backward keeps the recipe instead.
  std::shared_ptr<const Recipe> recipe;
};

class Tensor {
 public:
  Tensor() = default;  // an undefined tensor (no data), like a None gradient
  explicit Tensor(std::shared_ptr<TensorImpl> impl) : impl_(std::move(impl)) {}

  // A new, contiguous tensor. Uninitialized unless zero is true.
  static Tensor empty(const Shape& shape, DType dtype = DType::float32, bool zero = false);

  // Copies `values` into a new contiguous tensor of `shape` (numel must match).
  template <typename T>
  static Tensor from_vector(const std::vector<T>& values, const Shape& shape);

  bool defined() const { return impl_ != nullptr; }
  const Shape& shape() const { return impl().shape; }
  const Shape& strides() const { return impl().strides; }
  std::int64_t size(std::int64_t dim) const;  // negative dims count from the end
  std::int64_t dim() const { return static_cast<std::int64_t>(impl().shape.size()); }
  std::int64_t numel() const;
  DType dtype() const { return impl().dtype; }
  std::int64_t storage_offset() const { return impl().offset; }
  bool is_contiguous() const;

  // Typed pointer to the first element; T must match dtype(). Honour strides() unless
  // is_contiguous().
  template <typename T> T* data() const;
  void* raw_data() const;

  // The single value of a one-element tensor, as double.
  double item() const;
  // All values in row-major (logical) order, converted to T.
  template <typename T = double> std::vector<T> to_vector() const;

  // --- autograd ---
  bool requires_grad() const { return impl().requires_grad; }
  // Marks a leaf as a parameter whose gradient backward() should accumulate.
  Tensor& requires_grad_(bool requires_grad = true);
  bool is_leaf() const { return impl().grad_fn == nullptr; }
  const std::shared_ptr<Node>& grad_fn() const { return impl().grad_fn; }
  // The accumulated gradient (undefined before the first backward reaches this leaf).
  Tensor grad() const;
  void set_grad(const Tensor& grad);
  // PyTorch's `param.grad = None`.
  void reset_grad() { impl().grad.reset(); }

  // Runs hook on the gradient flowing into this tensor in every backward pass that reaches it
  // (hooks.hpp): it may return a replacement of the same shape and dtype, or an undefined
  // Tensor to keep it. On a leaf it sees the pass's whole gradient, before .grad() gets it.
  // label names the hook in errors (default: the tensor's op and shape).
  HookHandle register_hook(GradHook hook, std::string label = "") const;
  // Leaves only: runs hook once this backward pass has added all it adds to .grad().
  HookHandle register_post_accumulate_grad_hook(PostAccumulateGradHook hook, std::string label = "") const;

  // Reverse-mode differentiation from this tensor. `grad` defaults to 1 for a one-element
  // tensor and is required otherwise. Gradients accumulate (+=) into leaves' grad().
  // The recorded graph is freed afterwards unless retain_graph is true. With create_graph
  // the backward pass is recorded too (and the graph kept): the .grad() it leaves can be
  // differentiated again (docs/higher-order.md); grad() (engine.hpp) returns gradients instead.
  // The flags go by name: loss.backward({}, {.create_graph = true}) (grad_options.hpp).
  void backward(const Tensor& grad = Tensor(), const BackwardOptions& options = {}) const;

  // How many times this tensor's memory has been written in place (copy_, fill_, an optimizer
  // step; views share the count), as PyTorch's `_version`. A backward refuses to run on a tensor
  // saved for it at another version (node.hpp, Saves).
  std::uint64_t version() const;
  // Counts one in-place write: for code that writes through data<T>() (an optimizer step).
  void increment_version() const;

  // Same data, cut from the graph: no grad_fn, requires_grad false.
  Tensor detach() const;
  // A new contiguous tensor with a copy of the data (differentiable).
  Tensor clone() const;
  // This tensor if already contiguous, otherwise a contiguous copy (differentiable).
  Tensor contiguous() const;
  // Converts the dtype (differentiable between float types).
  Tensor to(DType dtype) const;

  // Member forms of common ops (see ops.hpp for the formulas).
  Tensor reshape(const Shape& shape) const;
  Tensor view(const Shape& shape) const;
  Tensor transpose(std::int64_t dim0, std::int64_t dim1) const;
  Tensor permute(const Shape& dims) const;
  Tensor sum() const;
  Tensor mean() const;

  // PyTorch's methods, each the function of ops.hpp of the same name (tensor_methods.cpp):
  // x.relu() is relu(x). x[i] is select(x, 0, i): row i, a view, as Python's x[i];
  // x.slice(dim, start, end) is Python's x[..., start:end].
  Tensor operator[](std::int64_t i) const;
  Tensor select(std::int64_t dim, std::int64_t index) const;
  Tensor slice(std::int64_t dim, std::int64_t start, std::int64_t end, std::int64_t step = 1) const;
  Tensor narrow(std::int64_t dim, std::int64_t start, std::int64_t length) const;
  Tensor flatten(std::int64_t start_dim = 0, std::int64_t end_dim = -1) const;
  Tensor unsqueeze(std::int64_t dim) const;
  Tensor squeeze(std::int64_t dim) const;
  Tensor sum(const Shape& dims, bool keepdim = false) const;
  Tensor mean(const Shape& dims, bool keepdim = false) const;
  Tensor relu() const;
  Tensor gelu() const;
  Tensor silu() const;
  Tensor tanh() const;
  Tensor sigmoid() const;
  Tensor exp() const;
  Tensor log() const;
  Tensor sqrt() const;
  Tensor rsqrt() const;
  Tensor abs() const;
  Tensor neg() const;
  Tensor pow(double exponent) const;
  Tensor softmax(std::int64_t dim) const;
  Tensor log_softmax(std::int64_t dim) const;
  Tensor argmax(std::int64_t dim, bool keepdim = false) const;
  Tensor argmax() const;
  Tensor eq(const Tensor& other) const;
  Tensor ne(const Tensor& other) const;
  Tensor lt(const Tensor& other) const;
  Tensor le(const Tensor& other) const;
  Tensor gt(const Tensor& other) const;
  Tensor ge(const Tensor& other) const;

  // Copies src's values into this tensor in place (shapes must match; not recorded).
  void copy_(const Tensor& src);
  // Fills in place with a value (not recorded).
  void fill_(double value);

  TensorImpl& impl() const;
  const std::shared_ptr<TensorImpl>& impl_ptr() const { return impl_; }
  // True when both handles refer to the same TensorImpl.
  bool is_same(const Tensor& other) const { return impl_ == other.impl_; }

 private:
  std::shared_ptr<TensorImpl> impl_;
};

using TensorList = std::vector<Tensor>;

// --- factories ---
// tensor({1, 2, 3, 4}, {2, 2}) -> float32; dtype may be float64 or int64 (values must be
// integers then).
Tensor tensor(const std::vector<double>& values, const Shape& shape, DType dtype = DType::float32);
// A 0-dim tensor holding one value.
Tensor scalar_tensor(double value, DType dtype = DType::float32);
Tensor zeros(const Shape& shape, DType dtype = DType::float32);
Tensor ones(const Shape& shape, DType dtype = DType::float32);
Tensor full(const Shape& shape, double value, DType dtype = DType::float32);
Tensor zeros_like(const Tensor& t);
Tensor ones_like(const Tensor& t);
// [start, start + step, ...) while < end (or > end for a negative step).
Tensor arange(double start, double end, double step = 1.0, DType dtype = DType::float32);
Tensor arange(double end, DType dtype = DType::float32);

// Printing in PyTorch's format (tensor_print.cpp): tensor([[ 1.0000, -2.5000], ...], dtype=torch.float64).
std::ostream& operator<<(std::ostream& os, const Tensor& t);

}  // namespace tapegrad
