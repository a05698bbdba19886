// engine.hpp — reverse-mode differentiation over the recorded graph.
#pragma once

#include "tensor.hpp"

namespace tapegrad {

// Backpropagates `grad` (dL/d root) from `root` to every leaf that requires grad,
// accumulating into their .grad(). Tensor::backward() calls this.
void run_backward(const Tensor& root, const Tensor& grad, bool retain_graph);

}  // namespace tapegrad
