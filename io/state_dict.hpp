// state_dict.hpp — a module's parameters and buffers as an ordered name -> tensor map, and
// loading such a map back into a module, as PyTorch's state_dict() / load_state_dict().
//
//   io::StateDict sd = io::state_dict(model);          // "0.weight", "0.bias", ...
//   io::LoadResult r = io::load_state_dict(model, sd);  // strict: every key must match
//
// The names are named_parameters()'s dotted names, module by module as PyTorch orders them
// (a module's parameters, then its buffers, then its children), so they map one to one to a
// PyTorch model with the same structure. Files: see checkpoint.hpp and safetensors.hpp.
#pragma once

#include <cstddef>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "../autograd/tensor.hpp"
#include "../nn/module.hpp"

namespace tapegrad::io {

// Ordered name -> tensor map with unique names (insertion order is kept, lookups are hashed).
class StateDict {
 public:
  using Item = std::pair<std::string, Tensor>;

  // Appends an entry. Throws ValueError for a duplicate name or an undefined tensor.
  void insert(std::string name, Tensor value);
  bool contains(const std::string& name) const { return index_.count(name) != 0; }
  // The tensor named name, or nullptr.
  const Tensor* find(const std::string& name) const;
  // The tensor named name; throws ValueError naming the key when absent.
  const Tensor& at(const std::string& name) const;

  std::size_t size() const { return items_.size(); }
  bool empty() const { return items_.empty(); }
  const std::vector<Item>& items() const { return items_; }
  std::vector<Item>::const_iterator begin() const { return items_.begin(); }
  std::vector<Item>::const_iterator end() const { return items_.end(); }

 private:
  std::vector<Item> items_;
  std::unordered_map<std::string, std::size_t> index_;
};

// Every parameter and buffer of `module`, by dotted name. The values ALIAS the module's
// tensors (detached: no grad, no graph), as in PyTorch: they change when the model trains.
// Clone them for a snapshot; saving to a file copies anyway.
StateDict state_dict(const nn::Module& module);

struct LoadResult {
  std::vector<std::string> missing_keys;     // in the module, not in the state dict
  std::vector<std::string> unexpected_keys;  // in the state dict, not in the module
  bool ok() const { return missing_keys.empty() && unexpected_keys.empty(); }
};

// Copies the values of `state` into the module's existing tensors, in place (under
// NoGradGuard; the module keeps its tensor handles, so an optimizer holding them still works).
//   strict = true:  a missing or unexpected key is an error (ValueError listing them).
//   strict = false: such keys are skipped and returned in the LoadResult.
// In both modes, a key present on both sides with a different shape (ShapeError) or dtype
// (DTypeError) is an error naming the key and both shapes or dtypes. Everything is checked
// before anything is copied: after an error the module is unchanged.
LoadResult load_state_dict(nn::Module& module, const StateDict& state, bool strict = true);

}  // namespace tapegrad::io

namespace tapegrad {
// PyTorch-like spellings: tapegrad::state_dict(model), tapegrad::load_state_dict(model, sd).
using io::load_state_dict;
using io::state_dict;
}  // namespace tapegrad
