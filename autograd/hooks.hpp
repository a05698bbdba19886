// hooks.hpp — functions the engine runs during backward, and the handles that remove them.
//
//   HookHandle h = y.register_hook([](const Tensor& g) { return g * 0.5; });  // halve dL/dy
//   w.register_post_accumulate_grad_hook([](Tensor& w) { ... w.grad() is final here ... });
//   h.remove();
//
// A gradient hook sees the gradient flowing into its tensor during a backward pass — for a
// leaf, the sum of every contribution of that pass, before it is added to .grad() — and may
// return a replacement (an undefined Tensor keeps it). A post-accumulate-grad hook runs on a
// leaf once its .grad() holds everything this backward pass adds to it: the moment a
// data-parallel run may start reducing that gradient. Hooks run in registration order. Module
// hooks (nn/module.hpp) are removed through the same handles.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace tapegrad {

class Tensor;

using GradHook = std::function<Tensor(const Tensor& grad)>;
using PostAccumulateGradHook = std::function<void(Tensor& leaf)>;

// Callbacks with a label each, removable by id while the list lives.
template <typename Fn>
class HookList {
 public:
  struct Entry {
    std::uint64_t id;
    std::string label;
    Fn fn;
  };
  std::uint64_t add(Fn fn, std::string label) {
    entries_.push_back({next_id_, std::move(label), std::move(fn)});
    return next_id_++;
  }
  void remove(std::uint64_t id) {
    std::erase_if(entries_, [id](const Entry& e) { return e.id == id; });
  }
  bool empty() const { return entries_.empty(); }
  // A copy: a hook may remove itself (or another) while the list is being run.
  std::vector<Entry> snapshot() const { return entries_; }

 private:
  std::vector<Entry> entries_;
  std::uint64_t next_id_ = 0;
};

// Removes one hook. Copies refer to the same hook; remove() is idempotent, and a handle
// outliving its tensor or module does nothing.
class HookHandle {
 public:
  HookHandle() = default;
  template <typename Fn>
  HookHandle(const std::shared_ptr<HookList<Fn>>& list, std::uint64_t id)
      : remove_([weak = std::weak_ptr<HookList<Fn>>(list), id] {
          if (auto l = weak.lock()) l->remove(id);
        }) {}
  void remove() {
    if (remove_) remove_();
    remove_ = nullptr;
  }

 private:
  std::function<void()> remove_;
};

// The hooks of a leaf tensor (TensorImpl::hooks).
struct LeafHooks {
  std::shared_ptr<HookList<GradHook>> grad = std::make_shared<HookList<GradHook>>();
  std::shared_ptr<HookList<PostAccumulateGradHook>> post_accumulate = std::make_shared<HookList<PostAccumulateGradHook>>();
  bool empty() const { return grad->empty() && post_accumulate->empty(); }
};

}  // namespace tapegrad
