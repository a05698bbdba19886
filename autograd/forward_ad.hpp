// forward_ad.hpp — forward mode on the tape: jvp, a Jacobian-vector product, as torch.func.jvp.
//
//   auto [y, dy] = jvp([](const TensorList& in) { return tanh(mul(in[0], in[1])); }, {x, w}, {dx, dw});
//   // y = f(x, w), dy = J_x f · dx + J_w f · dw: how y moves when the inputs move along (dx, dw)
//
// How: fn runs once, recorded on the tape as for a backward pass, while each op also attaches its
// forward rule to its node (record_forward, node.hpp): dout from one tangent per input. Then the
// recorded nodes are walked forward, inputs before users (the engine's topological order, from
// its front), each node's rule turning its inputs' tangents into its output's. A backward pass
// walks the same nodes from the back with the transposed rules (vjp); here one pass gives J·v for
// one direction v, where reverse mode gives vᵀJ for one output weighting: for a scalar loss of n
// parameters, one backward gives all n derivatives and forward mode would need n passes
// (docs/forward-mode.md).
//
// Undefined tangents are zeros, and so is the tangent of anything fn uses besides its inputs
// (its parameters, its constants). A node without a forward rule is refused by name.
//
// Forward over reverse: fn may itself take a gradient with create_graph (a backward pass is
// recorded, with the rules of the ops it runs): hvp_forward_over_reverse(f, x, v) = jvp of
// x ↦ ∇f(x) along v = H·v.
#pragma once

#include <functional>
#include <utility>

#include "tensor.hpp"

namespace tapegrad {

using JvpFn = std::function<Tensor(const TensorList& inputs)>;

// (fn(primals), J·tangents). tangents: one per primal, of its shape and dtype (an undefined one
// is zeros). The output's tangent is zeros where fn's output does not depend on the primals.
std::pair<Tensor, Tensor> jvp(const JvpFn& fn, const TensorList& primals, const TensorList& tangents);

// H·v for a scalar f, forward over reverse: jvp of x ↦ ∇f(x) (grad with create_graph) along v.
// The same product as reverse over reverse (grad of ⟨∇f(x), v⟩), computed the other way round.
Tensor hvp_forward_over_reverse(const JvpFn& f, const Tensor& x, const Tensor& v);

namespace detail {
// For the ops' forward rules, where an undefined tangent stands for zeros: a + b of those defined.
Tensor tangent_sum(const Tensor& a, const Tensor& b);
// The forward rule of a fused op (attention, layer_norm, the GELU MLP, a checkpoint): the jvp of
// its composite, the same formula written with differentiable ops (what create_graph records
// for it). Inputs that are undefined (an absent bias) or have no tangent stay constants.
Tensor jvp_of(const JvpFn& composite, const TensorList& inputs, const TensorList& tangents);
// A tangent broadcast to an output's shape (an input of a broadcasting op may be smaller), made
// contiguous; undefined stays undefined.
Tensor tangent_to_shape(const Tensor& t, const Shape& shape);
}  // namespace detail

}  // namespace tapegrad
