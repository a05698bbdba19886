// saved_tensor.cpp — keeping a tensor for the backward, or the recipe that makes it again.
#include "saved_tensor.hpp"

#include <atomic>

#include "grad_mode.hpp"

namespace tapegrad {

namespace {
std::atomic<bool> recompute_enabled{true};
}  // namespace

void set_recompute_enabled(bool enabled) { recompute_enabled = enabled; }
bool is_recompute_enabled() { return recompute_enabled; }

void attach_recipe(const Tensor& out, std::function<Tensor()> make) {
  if (!recompute_enabled) return;
  out.impl().recipe = std::make_shared<const Recipe>(Recipe{std::move(make), out.impl().storage->version()});
}

SavedTensor::SavedTensor(const Tensor& t) {
  if (!t.defined()) return;
  const TensorImpl& impl = t.impl();
  if (impl.recipe && impl.grad_fn && impl.recipe->version == impl.storage->version()) {
    recipe_ = impl.recipe;
    grad_fn_ = impl.grad_fn;
  } else {
    kept_ = t;
  }
}

Tensor SavedTensor::get() const {
  if (!recipe_) return kept_;
  Tensor made;
  {
    NoGradGuard no_grad;
    made = recipe_->make();
  }
  made.impl().grad_fn = grad_fn_;  // the original's place in the graph
  made.impl().requires_grad = true;
  return made;
}

}  // namespace tapegrad
