// tensor.cpp — the Tensor handle: construction, accessors, factories and printing.
#include "tensor.hpp"

#include <cmath>
#include <cstring>
#include <iomanip>
#include <ostream>
#include <sstream>

#include "engine.hpp"
#include "node.hpp"
#include "ops.hpp"
#include "shape.hpp"

namespace tapegrad {

Tensor Tensor::empty(const Shape& shape, DType dtype, bool zero) {
  for (std::int64_t s : shape)
    if (s < 0) throw ShapeError("empty: negative size in shape " + shape_str(shape));
  auto impl = std::make_shared<TensorImpl>();
  impl->storage = std::make_shared<Storage>(shape_numel(shape) * size_of(dtype), zero);
  impl->shape = shape;
  impl->strides = contiguous_strides(shape);
  impl->dtype = dtype;
  return Tensor(std::move(impl));
}

template <typename T>
Tensor Tensor::from_vector(const std::vector<T>& values, const Shape& shape) {
  if (static_cast<std::int64_t>(values.size()) != shape_numel(shape))
    throw ShapeError("tensor: " + std::to_string(values.size()) + " values do not fill shape " +
                     shape_str(shape) + " (" + std::to_string(shape_numel(shape)) + " elements)");
  Tensor t = empty(shape, dtype_of<T>());
  std::memcpy(t.raw_data(), values.data(), values.size() * sizeof(T));
  return t;
}
template Tensor Tensor::from_vector<float>(const std::vector<float>&, const Shape&);
template Tensor Tensor::from_vector<double>(const std::vector<double>&, const Shape&);
template Tensor Tensor::from_vector<std::int64_t>(const std::vector<std::int64_t>&, const Shape&);

TensorImpl& Tensor::impl() const {
  if (!impl_) throw ValueError("use of an undefined tensor (a default-constructed Tensor, or a "
                               "grad() that backward has not filled yet)");
  return *impl_;
}

std::int64_t Tensor::size(std::int64_t d) const { return shape()[normalize_dim(d, dim(), "size")]; }
std::int64_t Tensor::numel() const { return shape_numel(shape()); }

bool Tensor::is_contiguous() const {
  const TensorImpl& t = impl();
  std::int64_t expected = 1;
  for (std::size_t i = t.shape.size(); i-- > 0;) {
    if (t.shape[i] != 1 && t.strides[i] != expected) return false;
    expected *= t.shape[i];
  }
  return true;
}

void* Tensor::raw_data() const {
  const TensorImpl& t = impl();
  return static_cast<char*>(t.storage->data()) + t.offset * size_of(t.dtype);
}

template <typename T> T* Tensor::data() const {
  if (dtype() != dtype_of<T>())
    throw DTypeError(std::string("data<") + dtype_name(dtype_of<T>()) + ">() on a tensor of dtype " +
                     dtype_name(dtype()));
  return static_cast<T*>(raw_data());
}
template float* Tensor::data<float>() const;
template double* Tensor::data<double>() const;
template std::int64_t* Tensor::data<std::int64_t>() const;

template <typename T> std::vector<T> Tensor::to_vector() const {
  std::vector<T> out(numel());
  dispatch_all(dtype(), "to_vector", [&]<typename S>() {
    const S* p = static_cast<const S*>(raw_data());
    for_each_strided(shape(), strides(), [&](std::int64_t i, std::int64_t off) {
      out[i] = static_cast<T>(p[off]);
    });
  });
  return out;
}
template std::vector<float> Tensor::to_vector<float>() const;
template std::vector<double> Tensor::to_vector<double>() const;
template std::vector<std::int64_t> Tensor::to_vector<std::int64_t>() const;

double Tensor::item() const {
  if (numel() != 1)
    throw ShapeError("item: only a one-element tensor has an item, got shape " + shape_str(shape()));
  return to_vector<double>()[0];
}

Tensor& Tensor::requires_grad_(bool requires_grad) {
  if (!is_leaf())
    throw GraphError("requires_grad_: only leaf tensors can change requires_grad (this one is the "
                     "output of '" + grad_fn()->name + "'; use detach() to make a leaf)");
  if (requires_grad && !is_floating(dtype()))
    throw DTypeError(std::string("requires_grad_: only float tensors can require grad, got ") +
                     dtype_name(dtype()));
  impl().requires_grad = requires_grad;
  return *this;
}

Tensor Tensor::grad() const { return impl().grad ? Tensor(impl().grad) : Tensor(); }

void Tensor::set_grad(const Tensor& grad) {
  if (!grad.defined()) {
    impl().grad.reset();
    return;
  }
  if (grad.shape() != shape() || grad.dtype() != dtype())
    throw ShapeError("set_grad: gradient of shape " + shape_str(grad.shape()) + " (" +
                     dtype_name(grad.dtype()) + ") for a tensor of shape " + shape_str(shape()) +
                     " (" + dtype_name(dtype()) + ")");
  impl().grad = grad.impl_ptr();
}

HookHandle Tensor::register_hook(GradHook hook, std::string label) const {
  if (!requires_grad())
    throw GraphError("register_hook: the tensor of shape " + shape_str(shape()) +
                     " does not require grad: no gradient will flow into it");
  if (grad_fn()) {
    auto& hooks = grad_fn()->grad_hooks;
    if (!hooks) hooks = std::make_shared<HookList<GradHook>>();
    const std::uint64_t id = hooks->add(std::move(hook), std::move(label));
    return HookHandle(hooks, id);
  }
  if (!impl().hooks) impl().hooks = std::make_shared<LeafHooks>();
  const std::uint64_t id = impl().hooks->grad->add(std::move(hook), std::move(label));
  return HookHandle(impl().hooks->grad, id);
}

HookHandle Tensor::register_post_accumulate_grad_hook(PostAccumulateGradHook hook, std::string label) const {
  if (!requires_grad() || grad_fn())
    throw GraphError("register_post_accumulate_grad_hook: only leaves that require grad accumulate a .grad(); this "
                     "tensor of shape " + shape_str(shape()) +
                     (grad_fn() ? " is the output of '" + grad_fn()->name + "'" : " does not require grad"));
  if (!impl().hooks) impl().hooks = std::make_shared<LeafHooks>();
  const std::uint64_t id = impl().hooks->post_accumulate->add(std::move(hook), std::move(label));
  return HookHandle(impl().hooks->post_accumulate, id);
}

void Tensor::backward(const Tensor& grad, const BackwardOptions& options) const { run_backward(*this, grad, options); }

std::uint64_t Tensor::version() const { return impl().storage->version(); }
void Tensor::increment_version() const { impl().storage->bump_version(); }

Tensor Tensor::detach() const {
  auto impl = std::make_shared<TensorImpl>();
  const TensorImpl& src = this->impl();
  impl->storage = src.storage;
  impl->offset = src.offset;
  impl->shape = src.shape;
  impl->strides = src.strides;
  impl->dtype = src.dtype;
  return Tensor(std::move(impl));
}

Tensor Tensor::clone() const {
  // A copy that is a new buffer even when contiguous: x * 1 would do, but a dedicated op reads
  // better in printed graphs.
  Tensor out = empty(shape(), dtype());
  out.copy_(*this);
  if (should_record({*this}))
    record(out, "clone", {*this}, [](const Tensor& dout) -> TensorList { return {dout}; }, DoubleBackward::supported, Saves::nothing);
  if (forward_rules_wanted()) record_forward(out, [](const TensorList& t) { return t[0].clone(); });
  return out;
}

Tensor Tensor::contiguous() const { return tapegrad::contiguous(*this); }
Tensor Tensor::to(DType dtype) const { return to_dtype(*this, dtype); }
Tensor Tensor::reshape(const Shape& s) const { return tapegrad::reshape(*this, s); }
Tensor Tensor::view(const Shape& s) const { return tapegrad::view(*this, s); }
Tensor Tensor::transpose(std::int64_t d0, std::int64_t d1) const {
  return tapegrad::transpose(*this, d0, d1);
}
Tensor Tensor::permute(const Shape& dims) const { return tapegrad::permute(*this, dims); }
Tensor Tensor::sum() const { return tapegrad::sum(*this); }
Tensor Tensor::mean() const { return tapegrad::mean(*this); }

void Tensor::copy_(const Tensor& src) {
  if (src.shape() != shape())
    throw ShapeError("copy_: source shape " + shape_str(src.shape()) + " does not match " +
                     shape_str(shape()));
  impl().storage->bump_version();
  dispatch_all(dtype(), "copy_", [&]<typename T>() {
    T* dst = static_cast<T*>(raw_data());
    if (is_contiguous() && src.is_contiguous() && src.dtype() == dtype()) {
      std::memmove(dst, src.raw_data(), numel() * sizeof(T));
      return;
    }
    const Shape& dst_strides = strides();
    std::vector<std::int64_t> dst_offsets(numel());
    for_each_strided(shape(), dst_strides,
                     [&](std::int64_t i, std::int64_t off) { dst_offsets[i] = off; });
    dispatch_all(src.dtype(), "copy_", [&]<typename S>() {
      const S* s = static_cast<const S*>(src.raw_data());
      for_each_strided(src.shape(), src.strides(), [&](std::int64_t i, std::int64_t off) {
        dst[dst_offsets[i]] = static_cast<T>(s[off]);
      });
    });
  });
}

void Tensor::fill_(double value) {
  impl().storage->bump_version();
  dispatch_all(dtype(), "fill_", [&]<typename T>() {
    T* p = static_cast<T*>(raw_data());
    for_each_strided(shape(), strides(),
                     [&](std::int64_t, std::int64_t off) { p[off] = static_cast<T>(value); });
  });
}

// ---------------------------------------------------------------- factories

Tensor tensor(const std::vector<double>& values, const Shape& shape, DType dtype) {
  if (static_cast<std::int64_t>(values.size()) != shape_numel(shape))
    throw ShapeError("tensor: " + std::to_string(values.size()) + " values do not fill shape " +
                     shape_str(shape) + " (" + std::to_string(shape_numel(shape)) + " elements)");
  Tensor t = Tensor::empty(shape, dtype);
  dispatch_all(dtype, "tensor", [&]<typename T>() {
    T* p = t.data<T>();
    for (std::size_t i = 0; i < values.size(); ++i) p[i] = static_cast<T>(values[i]);
  });
  return t;
}

Tensor scalar_tensor(double value, DType dtype) { return full({}, value, dtype); }
Tensor zeros(const Shape& shape, DType dtype) { return Tensor::empty(shape, dtype, true); }
Tensor ones(const Shape& shape, DType dtype) { return full(shape, 1.0, dtype); }
Tensor full(const Shape& shape, double value, DType dtype) {
  Tensor t = Tensor::empty(shape, dtype);
  t.fill_(value);
  return t;
}
Tensor zeros_like(const Tensor& t) { return zeros(t.shape(), t.dtype()); }
Tensor ones_like(const Tensor& t) { return ones(t.shape(), t.dtype()); }

Tensor arange(double start, double end, double step, DType dtype) {
  if (step == 0 || !std::isfinite(start) || !std::isfinite(end) || !std::isfinite(step))
    throw ValueError("arange: step must be nonzero and the bounds finite");
  const double count = std::ceil((end - start) / step);
  const std::int64_t n = count > 0 ? static_cast<std::int64_t>(count) : 0;
  Tensor t = Tensor::empty({n}, dtype);
  dispatch_all(dtype, "arange", [&]<typename T>() {
    T* p = t.data<T>();
    for (std::int64_t i = 0; i < n; ++i) p[i] = static_cast<T>(start + i * step);
  });
  return t;
}
Tensor arange(double end, DType dtype) { return arange(0.0, end, 1.0, dtype); }

}  // namespace tapegrad
