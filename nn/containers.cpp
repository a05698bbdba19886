// containers.cpp — Sequential and ModuleList.
#include "containers.hpp"

namespace tapegrad::nn {

Sequential::Sequential(std::initializer_list<std::shared_ptr<UnaryModule>> modules) : Sequential() {
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
  for (const auto& m : modules_) y = (*m)(y);  // module(x): a module of your own runs its hooks too
  return call.output(y);
}

void ModuleList::push_back(std::shared_ptr<Module> module) {
  register_module(std::to_string(modules_.size()), module);
  modules_.push_back(std::move(module));
}

}  // namespace tapegrad::nn
