// output_recorder.cpp — OutputRecorder: one forward hook per module.
#include "output_recorder.hpp"

namespace tapegrad::nn {

OutputRecorder::OutputRecorder(const ModuleList& modules)
    : OutputRecorder(std::vector<std::shared_ptr<Module>>(modules.begin(), modules.end())) {}

OutputRecorder::OutputRecorder(const std::vector<std::shared_ptr<Module>>& modules) {
  for (const auto& m : modules)
    handles_.push_back(m->register_forward_hook(
        [this](Module&, const TensorList&, Tensor& output) { outputs_.push_back(output); }, "OutputRecorder"));
}

OutputRecorder::~OutputRecorder() {
  for (HookHandle& h : handles_) h.remove();
}

}  // namespace tapegrad::nn
