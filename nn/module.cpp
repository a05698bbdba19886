// module.cpp — registration, traversal with dotted names, modes and printing.
#include "module.hpp"

#include <ostream>

#include "../autograd/grad_mode.hpp"

namespace tapegrad::nn {

void Module::check_new_name(const std::string& name) const {
  if (name.empty() || name.find('.') != std::string::npos)
    throw ValueError(type_name_ + ": invalid name '" + name + "' (must be non-empty, without '.')");
  auto taken = [&](const auto& list) {
    for (const auto& [n, _] : list)
      if (n == name) return true;
    return false;
  };
  if (taken(parameters_) || taken(buffers_) || taken(children_))
    throw ValueError(type_name_ + ": the name '" + name + "' is already registered");
}

Tensor Module::register_parameter(const std::string& name, Tensor t, bool requires_grad) {
  check_new_name(name);
  if (!t.defined()) throw ValueError(type_name_ + ": parameter '" + name + "' is undefined");
  if (requires_grad) t.requires_grad_(true);
  parameters_.emplace_back(name, t);
  return t;
}

Tensor Module::register_buffer(const std::string& name, Tensor t) {
  check_new_name(name);
  buffers_.emplace_back(name, t);
  return t;
}

void Module::add_child(const std::string& name, std::shared_ptr<Module> module) {
  check_new_name(name);
  if (!module) throw ValueError(type_name_ + ": module '" + name + "' is null");
  module->parent_ = this;
  module->name_in_parent_ = name;
  children_.emplace_back(name, std::move(module));
}

void Module::collect(const std::string& prefix, bool recurse, bool buffers, NamedTensors& out) const {
  for (const auto& [name, t] : buffers ? buffers_ : parameters_) out.emplace_back(prefix + name, t);
  if (!recurse) return;
  for (const auto& [name, child] : children_) child->collect(prefix + name + ".", true, buffers, out);
}

NamedTensors Module::named_parameters(bool recurse) const {
  NamedTensors out;
  collect("", recurse, false, out);
  return out;
}

std::vector<Tensor> Module::parameters(bool recurse) const {
  std::vector<Tensor> out;
  for (auto& [_, t] : named_parameters(recurse)) out.push_back(t);
  return out;
}

NamedTensors Module::named_buffers(bool recurse) const {
  NamedTensors out;
  collect("", recurse, true, out);
  return out;
}

std::vector<std::pair<std::string, std::shared_ptr<Module>>> Module::named_modules() {
  // A module that is not owned by a shared_ptr (one on the stack) is listed through a
  // non-owning pointer instead of failing in shared_from_this().
  std::shared_ptr<Module> self = weak_from_this().lock();
  if (!self) self = std::shared_ptr<Module>(std::shared_ptr<Module>(), this);
  std::vector<std::pair<std::string, std::shared_ptr<Module>>> out{{"", self}};
  for (const auto& [name, child] : children_)
    for (auto& [sub, m] : child->named_modules()) out.emplace_back(sub.empty() ? name : name + "." + sub, m);
  return out;
}

std::string Module::path() const {
  std::string p = name_in_parent_;
  for (const Module* m = parent_; m && m->parent_; m = m->parent_) p = m->name_in_parent_ + "." + p;
  return p.empty() ? type_name_ : p;
}

HookHandle Module::register_forward_pre_hook(ForwardPreHook hook, std::string label) {
  if (!pre_hooks_) pre_hooks_ = std::make_shared<HookList<ForwardPreHook>>();
  const std::uint64_t id = pre_hooks_->add(std::move(hook), std::move(label));
  return HookHandle(pre_hooks_, id);
}

HookHandle Module::register_forward_hook(ForwardHook hook, std::string label) {
  if (!forward_hooks_) forward_hooks_ = std::make_shared<HookList<ForwardHook>>();
  const std::uint64_t id = forward_hooks_->add(std::move(hook), std::move(label));
  return HookHandle(forward_hooks_, id);
}

namespace {
// "forward hook 'label' of module 'blocks.0.attn' (MultiHeadAttention)"
std::string hook_name(const char* kind, const std::string& label, std::size_t index, const Module& m) {
  return std::string(kind) + (label.empty() ? " " + std::to_string(index + 1) : " '" + label + "'") + " of " +
         (m.is_root() ? "the root module" : "module '" + m.path() + "'") + " (" + m.type_name() + ")";
}
}  // namespace

bool Module::has_forward_hooks() const {
  return (pre_hooks_ && !pre_hooks_->empty()) || (forward_hooks_ && !forward_hooks_->empty());
}

namespace {
// The module whose call() (operator()) is running its hooks on this thread: a ForwardCall its
// forward opens steps aside.
thread_local const Module* calling = nullptr;
}  // namespace

Module::ForwardCall::ForwardCall(Module& module, std::initializer_list<Tensor*> inputs, bool from_call)
    : module_(module), previous_(calling) {
  if (!from_call && calling == &module) {  // inside module(x): call() runs the hooks
    steps_aside_ = true;
    calling = nullptr;  // a nested forward() of the same module runs its own
    return;
  }
  scope_ = module.anomaly_scope();
  if (inputs.size() > inputs_.size()) throw ValueError("ForwardCall: more than 8 inputs");
  for (Tensor* t : inputs) inputs_[n_++] = t;
  if (module_.pre_hooks_ && !module_.pre_hooks_->empty()) run_pre_hooks();
  if (from_call) calling = &module;  // last: a pre-hook that throws leaves no trace
}

void Module::ForwardCall::run_pre_hooks() {
  TensorList list = this->inputs();
  const auto hooks = module_.pre_hooks_->snapshot();
  for (std::size_t i = 0; i < hooks.size(); ++i) {
    try {
      hooks[i].fn(module_, list);
    } catch (const std::exception& e) {
      throw ValueError(hook_name("forward pre-hook", hooks[i].label, i, module_) + " threw: " + e.what());
    }
    if (list.size() != n_)
      throw ValueError(hook_name("forward pre-hook", hooks[i].label, i, module_) + " changed the number of inputs from " +
                       std::to_string(n_) + " to " + std::to_string(list.size()));
  }
  for (std::size_t i = 0; i < n_; ++i) *inputs_[i] = list[i];
}

Module::ForwardCall::~ForwardCall() { calling = previous_; }

TensorList Module::ForwardCall::inputs() const {
  TensorList list;
  for (std::size_t i = 0; i < n_; ++i) list.push_back(*inputs_[i]);
  return list;
}

Tensor Module::ForwardCall::output(Tensor y) {
  if (steps_aside_ || !module_.forward_hooks_ || module_.forward_hooks_->empty()) return y;
  const TensorList list = inputs();
  const auto hooks = module_.forward_hooks_->snapshot();
  for (std::size_t i = 0; i < hooks.size(); ++i) {
    try {
      hooks[i].fn(module_, list, y);
    } catch (const std::exception& e) {
      throw ValueError(hook_name("forward hook", hooks[i].label, i, module_) + " threw: " + e.what());
    }
  }
  return y;
}

std::unique_ptr<ModuleScope> Module::anomaly_scope() const {
  return is_anomaly_enabled() ? std::make_unique<ModuleScope>(path()) : nullptr;
}

void Module::train(bool on) {
  training_ = on;
  for (auto& [_, child] : children_) child->train(on);
}

void Module::zero_grad() {
  for (auto& [_, t] : named_parameters()) t.reset_grad();
}

Module& Module::to(DType dtype) {
  NamedTensors all = named_parameters();
  for (auto& entry : named_buffers()) all.push_back(entry);
  for (auto& [_, t] : all) {
    if (!is_floating(t.dtype()) || t.dtype() == dtype) continue;  // a tied weight is seen twice
    Tensor converted;
    {
      NoGradGuard no_grad;
      converted = t.detach().to(dtype).contiguous();
    }
    // The same TensorImpl gets the new memory, so every handle to it sees it.
    TensorImpl& impl = t.impl();
    impl.storage = converted.impl().storage;
    impl.offset = converted.impl().offset;
    impl.strides = converted.impl().strides;
    impl.dtype = dtype;
    impl.grad.reset();
  }
  return *this;
}

std::int64_t Module::num_parameters() const {
  std::int64_t n = 0;
  for (const auto& [_, t] : named_parameters()) n += t.numel();
  return n;
}

namespace {
void print_module(std::ostream& os, const Module& m, int indent) {
  os << m.type_name() << '(' << m.extra_repr();
  const auto& children = m.named_children();
  const auto own = m.named_parameters(false);
  if (children.empty()) {
    os << ')';
    for (const auto& [name, t] : own) os << "  " << name << ' ' << shape_str(t.shape());
    return;
  }
  os << '\n';
  const std::string pad(indent + 2, ' ');
  for (const auto& [name, t] : own) os << pad << name << ' ' << shape_str(t.shape()) << '\n';
  for (const auto& [name, child] : children) {
    os << pad << '(' << name << "): ";
    print_module(os, *child, indent + 2);
    os << '\n';
  }
  os << std::string(indent, ' ') << ')';
}
}  // namespace

std::ostream& operator<<(std::ostream& os, const Module& module) {
  print_module(os, module, 0);
  return os << '\n';  // a whole line, as Python's print(model): std::cout << *model needs no "\n"
}

}  // namespace tapegrad::nn
