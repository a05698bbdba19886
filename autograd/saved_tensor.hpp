// saved_tensor.hpp — what an op keeps of an input for its backward: the tensor itself, or a
// recipe that makes it again.
//
// Why: in a pre-LN transformer block each norm's output y feeds a linear layer (q|k|v, fc1),
// and the linear keeps y for its weight gradient dW = dyᵀ·y. The norm keeps its own input x
// (and two numbers per row) anyway, and y is a cheap function of those: one pass over x, far
// less work than the linear's products. Keeping y costs d_model floats per token and norm,
// 2·d_model per token and layer, a sixth of what a pre-LN block keeps. So a norm attaches a
// recipe to its output, an op that keeps its input through SavedTensor keeps the recipe
// instead, and y's memory is freed as soon as the forward is done with it. The backward makes
// y again, bitwise the same: the same kernel on the same numbers.
//
// This is selective activation recomputation (Korthikanti et al. 2022, "Reducing Activation
// Recomputation in Large Transformer Models": recompute what is large and cheap); PyTorch
// lets users do it by hand with saved-tensor hooks (torch.autograd.graph.saved_tensors_hooks).
//
// The recipe is used only where it is exact:
//   - the input is the tensor the recipe was attached to (the same TensorImpl, not a view);
//   - its bytes were not written since it was made (Storage::version counts copy_ and fill_).
// Otherwise the op keeps the tensor, as before. set_recompute_enabled(false) stops the norms
// from attaching recipes (speed over memory).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>

#include "tensor.hpp"

namespace tapegrad {

struct Recipe {
  std::function<Tensor()> make;  // the tensor's values again (run with grad mode off)
  std::uint64_t version = 0;     // its Storage's version when it was made
};

// Attaches `make` to `out`, which the calling op has just made and recorded, so that ops that
// keep `out` can keep `make` instead. Does nothing while recomputation is disabled.
void attach_recipe(const Tensor& out, std::function<Tensor()> make);

// Whether norms attach recipes to their outputs (default: yes).
void set_recompute_enabled(bool enabled);
bool is_recompute_enabled();

class SavedTensor {
 public:
  SavedTensor() = default;
  // Keeps t's recipe when it has a valid one (see above), otherwise t itself.
  explicit SavedTensor(const Tensor& t);

  // The tensor: the one kept, or one made again. A tensor made again has the kept tensor's
  // place in the graph (its grad_fn), so a recorded backward (create_graph) differentiates
  // through it exactly as through the original.
  Tensor get() const;
  bool defined() const { return kept_.defined() || recipe_ != nullptr; }
  // True when it holds a recipe rather than the tensor (for tests and diagnostics).
  bool is_recipe() const { return recipe_ != nullptr; }

 private:
  Tensor kept_;
  std::shared_ptr<const Recipe> recipe_;
  std::shared_ptr<Node> grad_fn_;  // the original's, with a recipe
};

}  // namespace tapegrad
