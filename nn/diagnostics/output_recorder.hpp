// output_recorder.hpp — the outputs of some modules, kept by forward hooks: what a block wrote,
// seen from outside the model, as PyTorch users collect activations.
#pragma once

#include <memory>
#include <vector>

#include "../containers.hpp"
#include "../module.hpp"

namespace tapegrad::nn {

// The outputs of some modules, in the order they ran, kept by forward hooks (Module's hooks)
// from its construction to its destruction, which removes them:
//   nn::OutputRecorder outputs(*lm.blocks);  lm.forward(tokens);  layer_stats(outputs.outputs());
// Outputs are kept as they are (with their graph when recorded).
class OutputRecorder {
 public:
  explicit OutputRecorder(const ModuleList& modules);  // each module of the list
  explicit OutputRecorder(const std::vector<std::shared_ptr<Module>>& modules);
  ~OutputRecorder();
  OutputRecorder(const OutputRecorder&) = delete;
  OutputRecorder& operator=(const OutputRecorder&) = delete;
  const std::vector<Tensor>& outputs() const { return outputs_; }
  void clear() { outputs_.clear(); }

 private:
  std::vector<Tensor> outputs_;
  std::vector<HookHandle> handles_;
};

}  // namespace tapegrad::nn
