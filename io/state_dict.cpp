// state_dict.cpp — collecting a module's tensors by name, and loading them back in place.
#include "state_dict.hpp"

#include <algorithm>

#include "../autograd/grad_mode.hpp"
#include "names.hpp"

namespace tapegrad::io {

void StateDict::insert(std::string name, Tensor value) {
  if (!value.defined()) throw ValueError("StateDict: the tensor for " + printable(name) + " is undefined");
  if (!index_.emplace(name, items_.size()).second)
    throw ValueError("StateDict: duplicate key " + printable(name));
  items_.emplace_back(std::move(name), std::move(value));
}

const Tensor* StateDict::find(const std::string& name) const {
  auto it = index_.find(name);
  return it == index_.end() ? nullptr : &items_[it->second].second;
}

const Tensor& StateDict::at(const std::string& name) const {
  if (const Tensor* t = find(name)) return *t;
  throw ValueError("StateDict: no key " + printable(name));
}

namespace {

// PyTorch's order: this module's parameters, its buffers, then each child's, depth first.
void collect(const nn::Module& module, const std::string& prefix, StateDict& out) {
  for (const auto& [name, t] : module.named_parameters(false)) out.insert(prefix + name, t.detach());
  for (const auto& [name, t] : module.named_buffers(false))
    if (t.defined()) out.insert(prefix + name, t.detach());  // PyTorch skips None buffers too
  for (const auto& [name, child] : module.named_children()) collect(*child, prefix + name + ".", out);
}

// "'a', 'b', 'c' and 2 more"
std::string key_list(const std::vector<std::string>& keys) {
  std::string out;
  const std::size_t shown = std::min<std::size_t>(keys.size(), 8);
  for (std::size_t i = 0; i < shown; ++i) out += (i ? ", " : "") + printable(keys[i]);
  if (keys.size() > shown) out += " and " + std::to_string(keys.size() - shown) + " more";
  return out;
}

}  // namespace

StateDict state_dict(const nn::Module& module) {
  StateDict out;
  collect(module, "", out);
  return out;
}

LoadResult load_state_dict(nn::Module& module, const StateDict& state, bool strict) {
  const StateDict target = state_dict(module);
  LoadResult result;
  std::vector<std::string> shape_errors, dtype_errors;
  for (const auto& [name, dst] : target) {
    const Tensor* src = state.find(name);
    if (!src) {
      result.missing_keys.push_back(name);
    } else if (src->shape() != dst.shape()) {
      shape_errors.push_back(printable(name) + ": " + shape_str(src->shape()) + " in the state dict, " +
                             shape_str(dst.shape()) + " in the module");
    } else if (src->dtype() != dst.dtype()) {
      dtype_errors.push_back(printable(name) + ": " + dtype_name(src->dtype()) + " in the state dict, " +
                             dtype_name(dst.dtype()) + " in the module");
    }
  }
  for (const auto& [name, _] : state)
    if (!target.contains(name)) result.unexpected_keys.push_back(name);

  auto join = [](const std::vector<std::string>& lines) {
    std::string out;
    for (const auto& line : lines) out += "\n  " + line;
    return out;
  };
  // A mismatch rarely comes alone: a model one block deeper has both other shapes (its
  // position table) and keys the file lacks. Say all of it, so the reader sees the cause.
  std::string keys;
  if (!result.missing_keys.empty())
    keys += "\n  missing key(s) (in the module, not in the state dict): " + key_list(result.missing_keys);
  if (!result.unexpected_keys.empty())
    keys += "\n  unexpected key(s) (in the state dict, not in the module): " + key_list(result.unexpected_keys);
  if (!shape_errors.empty())
    throw ShapeError("load_state_dict: shape mismatch for " + std::to_string(shape_errors.size()) +
                     " key(s):" + join(shape_errors) + keys);
  if (!dtype_errors.empty())
    throw DTypeError("load_state_dict: dtype mismatch for " + std::to_string(dtype_errors.size()) +
                     " key(s):" + join(dtype_errors) + keys);
  if (strict && !result.ok()) {
    std::string msg = "load_state_dict (strict):";
    if (!result.missing_keys.empty())
      msg += " missing key(s) " + key_list(result.missing_keys) + ";";
    if (!result.unexpected_keys.empty())
      msg += " unexpected key(s) " + key_list(result.unexpected_keys) + ";";
    throw ValueError(msg + " pass strict = false to load the keys that match");
  }

  // Everything checked: now copy. copy_ writes through the module's own handles (target holds
  // detached aliases of them), so the parameters keep their identity and requires_grad.
  NoGradGuard no_grad;
  for (const auto& [name, dst] : target)
    if (const Tensor* src = state.find(name)) {
      Tensor handle = dst;  // a handle copy aliases the same data
      handle.copy_(*src);
    }
  return result;
}

}  // namespace tapegrad::io
