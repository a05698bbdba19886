// gather.cpp — picking one element per index position along a dim, and its transpose:
//   gather:      out[p] = x[p with dim d replaced by index[p]]            (out has index's shape)
//   scatter_add: out = self;  out[p with dim d replaced by index[p]] += src[p]
// Each is the other's backward: d gather / dx = scatter_add(zeros, d, index, dout), and
// d scatter_add / dsrc = gather(dout, d, index) (d / dself = dout). So both differentiate
// twice, and both are linear: their forward rules are themselves on the tangents. As
// torch.gather and torch.scatter_add; topk's values are a gather (compare.cpp).
#include <algorithm>
#include <string>

#include "../forward_ad.hpp"
#include "../node.hpp"
#include "../ops.hpp"
#include "../shape.hpp"

namespace tapegrad {

namespace {

// The shapes torch.gather accepts: index int64 with x's number of dims, and no larger than x in
// any dim but d. Returns d normalized.
std::int64_t check_gather(const char* op, const Shape& x, const Tensor& index, std::int64_t dim, const char* x_name) {
  if (index.dtype() != DType::int64)
    throw DTypeError(std::string(op) + ": index must be int64, got " + std::string(dtype_name(index.dtype())));
  const std::int64_t nd = static_cast<std::int64_t>(x.size());
  if (index.dim() != nd)
    throw ShapeError(std::string(op) + ": index " + shape_str(index.shape()) + " must have as many dims as " + x_name + " " +
                     shape_str(x));
  const std::int64_t d = normalize_dim(dim, std::max<std::int64_t>(nd, 1), op);
  for (std::int64_t e = 0; e < nd; ++e)
    if (e != d && index.shape()[e] > x[e])
      throw ShapeError(std::string(op) + ": index " + shape_str(index.shape()) + " is larger than " + x_name + " " +
                       shape_str(x) + " in dim " + std::to_string(e) + " (only dim " + std::to_string(d) + " may differ)");
  return d;
}

// Calls fn(p, q) for every position p of index (row-major) with q the flat position in a
// contiguous tensor of `shape` of the same element with dim d replaced by index[p]; throws,
// naming the index, when one is out of range.
template <typename Fn>
void for_each_target(const char* op, const Tensor& index, const Shape& shape, std::int64_t d, Fn&& fn) {
  const Tensor idx = index.contiguous();
  const std::int64_t* ix = idx.data<std::int64_t>();
  const Shape strides = contiguous_strides(shape);
  for (std::int64_t p = 0; p < idx.numel(); ++p) {
    const Shape at = unravel_index(p, idx.shape());
    const std::int64_t k = ix[p];
    if (k < 0 || k >= shape[static_cast<std::size_t>(d)])
      throw ValueError(std::string(op) + ": index " + std::to_string(k) + " at " + shape_str(at) + " is out of range for dim " +
                       std::to_string(d) + " of size " + std::to_string(shape[static_cast<std::size_t>(d)]));
    std::int64_t q = 0;
    for (std::size_t e = 0; e < at.size(); ++e) q += (static_cast<std::int64_t>(e) == d ? k : at[e]) * strides[e];
    fn(p, q);
  }
}

}  // namespace

Tensor gather(const Tensor& x, std::int64_t dim, const Tensor& index) {
  const std::int64_t d = check_gather("gather", x.shape(), index, dim, "x");
  const Tensor xc = x.detach().contiguous();
  Tensor out = Tensor::empty(index.shape(), x.dtype());
  dispatch_all(x.dtype(), "gather", [&]<typename T>() {
    const T* src = xc.data<T>();
    T* dst = out.data<T>();
    for_each_target("gather", index, x.shape(), d, [&](std::int64_t p, std::int64_t q) { dst[p] = src[q]; });
  });
  if (!should_record({x})) return out;
  const Tensor idx = index.detach();
  record(out, "gather", {x}, [d, idx, x_shape = x.shape()](const Tensor& dout) -> TensorList {
    return {scatter_add(zeros(x_shape, dout.dtype()), d, idx, dout)};
  }, DoubleBackward::supported, Saves::nothing);
  if (forward_rules_wanted()) record_forward(out, [d, idx](const TensorList& t) { return gather(t[0], d, idx); });
  return out;
}

Tensor scatter_add(const Tensor& self, std::int64_t dim, const Tensor& index, const Tensor& src) {
  const std::int64_t d = check_gather("scatter_add", self.shape(), index, dim, "self");
  if (src.dtype() != self.dtype())
    throw DTypeError(std::string("scatter_add: src is ") + dtype_name(src.dtype()) + ", self " + dtype_name(self.dtype()));
  // torch.scatter_add also takes a src larger than index (reading only its corner); here they
  // match, which keeps each op's backward the other op exactly.
  if (src.shape() != index.shape())
    throw ShapeError("scatter_add: src " + shape_str(src.shape()) + " must have index's shape " + shape_str(index.shape()));
  Tensor out = self.detach().contiguous().clone();
  const Tensor s = src.detach().contiguous();
  dispatch_all(self.dtype(), "scatter_add", [&]<typename T>() {
    const T* from = s.data<T>();
    T* into = out.data<T>();
    for_each_target("scatter_add", index, self.shape(), d, [&](std::int64_t p, std::int64_t q) { into[q] += from[p]; });
  });
  if (!should_record({self, src})) return out;
  const Tensor idx = index.detach();
  record(out, "scatter_add", {self, src}, [d, idx](const Tensor& dout) -> TensorList {
    return {dout, gather(dout, d, idx)};
  }, DoubleBackward::supported, Saves::nothing);
  if (forward_rules_wanted())
    record_forward(out, [d, idx, shape = self.shape()](const TensorList& t) {
      const Tensor from_src = t[1].defined() ? scatter_add(zeros(shape, t[1].dtype()), d, idx, t[1]) : Tensor();
      return detail::tangent_sum(t[0], from_src);
    });
  return out;
}

}  // namespace tapegrad
