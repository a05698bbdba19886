// containers.hpp — Sequential (chains UnaryModules) and ModuleList (holds any modules).
// Children are named "0", "1", ... as in PyTorch, so parameter names match.
#pragma once

#include <concepts>
#include <initializer_list>
#include <memory>
#include <vector>

#include "module.hpp"

namespace tapegrad::nn {

class Sequential : public UnaryModule {
 public:
  Sequential() : UnaryModule("Sequential") {}
  Sequential(std::initializer_list<std::shared_ptr<UnaryModule>> modules);
  explicit Sequential(const std::vector<std::shared_ptr<UnaryModule>>& modules);
  // std::make_shared<Sequential>(std::make_shared<Linear>(2, 16), std::make_shared<ReLU>(), ...):
  // make_shared cannot forward a braced list, so the modules come one by one, as LibTorch's.
  template <typename... M>
    requires(sizeof...(M) > 0 && (std::derived_from<M, UnaryModule> && ...))
  explicit Sequential(std::shared_ptr<M>... modules) : Sequential() {
    (push_back(std::move(modules)), ...);
  }
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
