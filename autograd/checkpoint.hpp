// checkpoint.hpp — activation checkpointing: trade compute for memory, as
// torch.utils.checkpoint (non-reentrant).
//
//   Tensor y = checkpoint([&](const TensorList& in) { return block->forward(in[0]); }, {x});
//
// The forward runs fn without recording it: none of fn's intermediates are kept, only its
// inputs (for a transformer block, the activation memory of the block becomes the size of
// its input). The output gets one node; its backward runs fn again — from the same state of
// the default generator, so dropout draws the same masks — with recording on, and
// backpropagates dL/dy through that recomputed graph: parameters used inside fn accumulate
// their .grad() from there, the inputs' gradients flow on to the rest of the graph. The
// default generator then continues as if fn had run once.
//
// As PyTorch: an input that does not require grad gets no gradient (parameters inside fn still
// do); under NoGradGuard fn simply runs; checkpoints may nest (an inner one recomputes during
// the outer one's recomputation). fn must compute the same thing twice: from its inputs, the
// parameters and the default generator alone. Module hooks inside fn run again during the
// recomputation. Post-accumulate-grad hooks of parameters inside fn run when the
// recomputation's backward has delivered their gradient.
#pragma once

#include <functional>

#include "tensor.hpp"

namespace tapegrad {

using CheckpointFn = std::function<Tensor(const TensorList& inputs)>;

Tensor checkpoint(const CheckpointFn& fn, const TensorList& inputs);

}  // namespace tapegrad
