// containers.hpp — Sequential (chains UnaryModules) and ModuleList (holds any modules).
// Children are named "0", "1", ... as in PyTorch, so parameter names match.
#pragma once

#include <initializer_list>
#include <memory>
#include <vector>

#include "module.hpp"

namespace tapegrad::nn {

class Sequential : public UnaryModule {
 public:
  Sequential() : UnaryModule("Sequential") {}
  Sequential(std::initializer_list<std::shared_ptr<UnaryModule>> modules);
  void push_back(std::shared_ptr<UnaryModule> module);
  // x -> m0 -> m1 -> ... -> y
  Tensor forward(const Tensor& x) override;
  std::size_t size() const { return modules_.size(); }
  const std::shared_ptr<UnaryModule>& operator[](std::size_t i) const { return modules_.at(i); }

 private:
  std::vector<std::shared_ptr<UnaryModule>> modules_;
};

class ModuleList : public Module {
 public:
  ModuleList() : Module("ModuleList") {}
  void push_back(std::shared_ptr<Module> module);
  std::size_t size() const { return modules_.size(); }
  const std::shared_ptr<Module>& operator[](std::size_t i) const { return modules_.at(i); }
  // The i-th module as its concrete type (throws if it is not one).
  template <typename M>
  std::shared_ptr<M> at(std::size_t i) const {
    auto m = std::dynamic_pointer_cast<M>(modules_.at(i));
    if (!m) throw ValueError("ModuleList: module " + std::to_string(i) + " is a " + modules_[i]->type_name());
    return m;
  }
  auto begin() const { return modules_.begin(); }
  auto end() const { return modules_.end(); }

 private:
  std::vector<std::shared_ptr<Module>> modules_;
};

}  // namespace tapegrad::nn
