// Exercise 4, solved: sum_to_shape, and the backward of broadcasting add and mul.
// Broadcasting lines the shapes up from the right, adds leading dims of size 1 to the shorter
// one, and stretches each dim of size 1 to the other's size without copying: one input value is
// used at many output positions. A value used at many places gets the sum of their gradients
// (fan-out, exercise 2), so the input's gradient is the output's summed over
//   - each leading dim that broadcasting added (grad.dim() - shape.size() of them), and
//   - each dim where the input has size 1 and the output does not (kept as size 1),
// and nothing else: a dim where both sizes agree maps one to one.
//   out = a + b:  dL/da = sum_to_shape(dout, a's shape),      dL/db = sum_to_shape(dout, b's shape)
//   out = a · b:  dL/da = sum_to_shape(dout · b, a's shape),  dL/db = sum_to_shape(dout · a, b's shape)
// (dout · b broadcasts b again: each output position's own b.)
#include "04_sum_to_shape/exercise.hpp"

namespace learn {

using tapegrad::Shape;
using tapegrad::Tensor;
using tapegrad::TensorList;

Tensor sum_to_shape(const Tensor& grad, const Shape& shape) {
  if (grad.shape() == shape) return grad;  // nothing was broadcast
  const std::int64_t lead = grad.dim() - static_cast<std::int64_t>(shape.size());  // dims broadcasting added
  std::vector<std::int64_t> dims;
  for (std::int64_t d = 0; d < grad.dim(); ++d)
    if (d < lead || (shape[static_cast<std::size_t>(d - lead)] == 1 && grad.shape()[static_cast<std::size_t>(d)] != 1))
      dims.push_back(d);
  // dims is not empty (the shapes differ). keepdim leaves the size-1 dims in place; reshape then
  // drops the leading ones (each of size 1 now).
  return tapegrad::reshape(tapegrad::sum(grad, dims, /*keepdim=*/true), shape);
}

Tensor add_op(const Tensor& a, const Tensor& b) {
  Tensor out = unrecorded([&] { return tapegrad::add(a, b); });  // the forward, given
  if (!tapegrad::should_record({a, b})) return out;
  tapegrad::record(out, "add_op", {a, b}, [a_shape = a.shape(), b_shape = b.shape()](const Tensor& dout) -> TensorList {
    return {learn::sum_to_shape(dout, a_shape), learn::sum_to_shape(dout, b_shape)};
  }, tapegrad::DoubleBackward::supported, tapegrad::Saves::nothing);
  return out;
}

Tensor mul_op(const Tensor& a, const Tensor& b) {
  Tensor out = unrecorded([&] { return tapegrad::mul(a, b); });  // the forward, given
  if (!tapegrad::should_record({a, b})) return out;
  tapegrad::record(out, "mul_op", {a, b}, [a, b](const Tensor& dout) -> TensorList {
    return {learn::sum_to_shape(tapegrad::mul(dout, b), a.shape()),
            learn::sum_to_shape(tapegrad::mul(dout, a), b.shape())};
  }, tapegrad::DoubleBackward::supported, tapegrad::Saves::inputs);
  return out;
}

}  // namespace learn
