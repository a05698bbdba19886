// containers.cpp — Sequential and ModuleList.
#include "containers.hpp"

namespace tapegrad::nn {

Sequential::Sequential(std::initializer_list<std::shared_ptr<UnaryModule>> modules) : Sequential() {
  for (const auto& m : modules) push_back(m);
}

Sequential::Sequential(const std::vector<std::shared_ptr<UnaryModule>>& modules) : Sequential() {
  for (const auto& m : modules) push_back(m);
}

void Sequential::push_back(std::shared_ptr<UnaryModule> module) {
  register_module(std::to_string(modules_.size()), module);
  modules_.push_back(std::move(module));
}

Tensor Sequential::forward(const Tensor& input) {
  Tensor x = input;
  ForwardCall call(*this, {&x});
  Tensor y = x;
  for (std::size_t i = 0; i < modules_.size(); ++i) {
    const Shape given = y.shape();
    try {
      y = (*modules_[i])(y);  // module(x): a module of your own runs its hooks too
    } catch (const ShapeError& e) {
      // The op's message names shapes, not the layer: say which layer took what.
      const std::string settings = modules_[i]->extra_repr();
      throw ShapeError("Sequential: layer (" + std::to_string(i) + ") " + modules_[i]->type_name() + "(" + settings +
                       ") given " + shape_str(given) + ": " + e.what());
    }
  }
  return call.output(y);
}

void ModuleList::push_back(std::shared_ptr<Module> module) {
  register_module(std::to_string(modules_.size()), module);
  modules_.push_back(std::move(module));
}

}  // namespace tapegrad::nn
