// recompute.hpp — a backward computed by running the forward again, recorded, and
// backpropagating through it.
//
// Two users:
//   - checkpoint() (checkpoint.hpp): the forward kept nothing, so its backward recomputes it.
//   - fused ops under create_graph: a fused kernel's backward (layer_norm, attention,
//     cross_entropy, ...) is a raw loop that the tape cannot differentiate. When the backward
//     pass is recorded (create_graph), the op instead recomputes its output as a composite of
//     differentiable ops and backpropagates through that composite with create_graph: the
//     composite's own backward, recorded, is the fused op's differentiable backward. The fast
//     kernel stays the path when create_graph is off. (docs/higher-order.md: why fused kernels
//     need a second formula.)
#pragma once

#include <functional>

#include "tensor.hpp"

namespace tapegrad::detail {

using CompositeFn = std::function<Tensor(const TensorList&)>;

// One alias per input that requires grad: the same data behind a new identity node over the
// input (other inputs pass through). The recomputation runs on the aliases, so the gradient
// of each input is caught at its own alias, even when two inputs are the same tensor.
TensorList aliases_of(const TensorList& inputs);

// The gradients of `inputs` (undefined for those that do not require grad) for the output
// gradient dout, by running composite(aliases_of(inputs)) recorded and backpropagating dout
// through it to the aliases. Other leaves the composite uses (parameters inside a
// checkpointed function) get their .grad() as in backward(). The pass is recorded exactly when
// grad mode is on at the call, i.e. inside a backward with create_graph.
TensorList backward_by_recomputing(const CompositeFn& composite, const TensorList& inputs, const Tensor& dout);

}  // namespace tapegrad::detail
