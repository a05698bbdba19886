// ada_ln.cpp — AdaLN, AdaLNZero and modulate().
#include "ada_ln.hpp"

#include "../autograd/ops.hpp"

namespace tapegrad::nn {

Tensor modulate(const Tensor& x, const Tensor& shift, const Tensor& scale) {
  if (x.dim() < 2 || shift.dim() != 2 || scale.shape() != shift.shape() || shift.size(0) != x.size(0) ||
      shift.size(1) != x.size(-1))
    throw ShapeError("modulate: x " + shape_str(x.shape()) + " needs shift and scale of shape (B, C) = [" +
                     std::to_string(x.dim() ? x.size(0) : 0) + ", " + std::to_string(x.dim() ? x.size(-1) : 0) +
                     "], got " + shape_str(shift.shape()) + " and " + shape_str(scale.shape()));
  // (B, C) -> (B, 1, ..., 1, C) so it broadcasts over the sequence dims of x
  Shape b_shape(x.dim(), 1);
  b_shape.front() = x.size(0);
  b_shape.back() = x.size(-1);
  return add(mul(x, add(scale.reshape(b_shape), 1.0)), shift.reshape(b_shape));
}

AdaLN::AdaLN(const AdaLNOptions& o) : Norm("AdaLN"), options(o) {
  if (o.dim() <= 0 || o.cond_dim() <= 0)
    throw ValueError("AdaLN: dim and cond_dim must be positive, got " + std::to_string(o.dim()) + " and " +
                     std::to_string(o.cond_dim()));
  modulation = register_module("modulation", std::make_shared<Linear>(LinearOptions(o.cond_dim(), 2 * o.dim()).dtype(o.dtype())));
  if (o.zero_init()) {
    modulation->weight.fill_(0.0);
    modulation->bias.fill_(0.0);
  }
}

Tensor AdaLN::forward(const Tensor& input, const Tensor& condition) {
  Tensor x = input, cond = condition;
  ForwardCall call(*this, {&x, &cond});
  if (!cond.defined() || cond.dim() != 2 || cond.size(1) != options.cond_dim())
    throw ShapeError("AdaLN: cond must be (B, cond_dim = " + std::to_string(options.cond_dim()) + "), got " +
                     (cond.defined() ? shape_str(cond.shape()) : std::string("none")));
  if (x.dim() < 2 || x.size(-1) != options.dim() || x.size(0) != cond.size(0))
    throw ShapeError("AdaLN: x must be (B, ..., " + std::to_string(options.dim()) + ") with B = " +
                     std::to_string(cond.size(0)) + " as cond, got " + shape_str(x.shape()));
  const TensorList shift_scale = chunk(modulation->forward(silu(cond)), 2, 1);  // 2 × (B, dim)
  return call.output(
      modulate(layer_norm(x, {options.dim()}, Tensor(), Tensor(), options.eps()), shift_scale[0], shift_scale[1]));
}

std::string AdaLN::extra_repr() const {
  return "dim=" + std::to_string(options.dim()) + ", cond_dim=" + std::to_string(options.cond_dim()) +
         (options.zero_init() ? ", zero_init" : "");
}

AdaLNZero::AdaLNZero(std::int64_t dim_, double eps_) : Norm("AdaLNZero"), dim(dim_), eps(eps_) {
  if (dim <= 0) throw ValueError("AdaLNZero: dim must be positive, got " + std::to_string(dim));
  if (!(eps > 0)) throw ValueError("AdaLNZero: eps must be positive, got " + std::to_string(eps));
}

TensorList AdaLNZero::split(const Tensor& m, const Tensor& x) const {
  if (!m.defined() || m.dim() != 2 || m.size(1) != 3 * dim || x.dim() < 2 || m.size(0) != x.size(0) || x.size(-1) != dim)
    throw ShapeError("AdaLNZero: x " + shape_str(x.shape()) + " needs its block's modulation m = [shift, scale, gate] of shape (B, 3·" +
                     std::to_string(dim) + "), got " + (m.defined() ? shape_str(m.shape()) : std::string("none")));
  return chunk(m, 3, 1);
}

Tensor AdaLNZero::forward(const Tensor& input, const Tensor& modulation) {
  Tensor x = input, m = modulation;
  ForwardCall call(*this, {&x, &m});
  const TensorList shift_scale_gate = split(m, x);
  return call.output(modulate(layer_norm(x, {dim}, Tensor(), Tensor(), eps), shift_scale_gate[0], shift_scale_gate[1]));
}

Tensor AdaLNZero::gate(const Tensor& update, const Tensor& m) {
  const Tensor g = split(m, update)[2];  // (B, C) -> (B, 1, C): one gate per channel, the same at every position
  return mul(update, g.reshape({g.size(0), 1, g.size(1)}));
}

std::string AdaLNZero::extra_repr() const { return "dim=" + std::to_string(dim) + ", shift, scale and gate from the block"; }

}  // namespace tapegrad::nn
