// module.hpp — Module: the base of every layer, in the spirit of PyTorch's C++ frontend.
//
// A module owns named parameters (tensors that require grad), named buffers (state that is
// saved but not trained) and named child modules, all registered in the constructor:
//
//   weight = register_parameter("weight", randn({out, in}, gen));
//   attn = register_module("attn", std::make_shared<MultiHeadAttention>(options));
//
// named_parameters() walks the tree and returns dotted names in registration order
// ("blocks.3.attn.qkv.weight"), the same names PyTorch gives the same model, so state
// dicts map one to one. forward() is not virtual here: each module declares the forward
// it needs; modules with one tensor in and one out derive from UnaryModule.
//
// Hooks, as PyTorch's: a forward pre-hook runs before the module's forward and may replace
// its tensor inputs; a forward hook runs after it and may replace its output. Both run in
// registration order and are removed by the handle they return (autograd/hooks.hpp):
//
//   auto h = block->register_forward_hook([&](nn::Module&, const TensorList&, Tensor& y) { outputs.push_back(y); });
//   h.remove();
//
// Each module's header says what its inputs are (Linear: {x}; MultiHeadAttention: {x,
// key_padding_mask}, or {x, memory, memory_padding_mask} for forward_cross; ...).
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <iosfwd>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "../autograd/anomaly.hpp"
#include "../autograd/hooks.hpp"
#include "../autograd/tensor.hpp"

namespace tapegrad::nn {

using NamedTensors = std::vector<std::pair<std::string, Tensor>>;

class Module;
// May change the inputs (in place); the number of inputs stays.
using ForwardPreHook = std::function<void(Module& module, TensorList& inputs)>;
// May replace the output.
using ForwardHook = std::function<void(Module& module, const TensorList& inputs, Tensor& output)>;

class Module : public std::enable_shared_from_this<Module> {
 public:
  explicit Module(std::string type_name) : type_name_(std::move(type_name)) {}
  virtual ~Module() = default;
  Module(const Module&) = delete;
  Module& operator=(const Module&) = delete;

  // The class name shown when printing ("Linear").
  const std::string& type_name() const { return type_name_; }

  // Parameters of this module and (recurse) all descendants, with dotted names.
  NamedTensors named_parameters(bool recurse = true) const;
  std::vector<Tensor> parameters(bool recurse = true) const;
  NamedTensors named_buffers(bool recurse = true) const;
  // This module (name "") and every descendant, depth first, with dotted names.
  std::vector<std::pair<std::string, std::shared_ptr<Module>>> named_modules();
  // Direct children in registration order.
  const std::vector<std::pair<std::string, std::shared_ptr<Module>>>& named_children() const {
    return children_;
  }

  // Training mode (dropout active) for this module and all descendants.
  void train(bool on = true);
  void eval() { train(false); }
  bool is_training() const { return training_; }

  // Clears the gradient of every parameter (PyTorch's zero_grad(set_to_none=True)).
  void zero_grad();
  // Converts every floating-point parameter and buffer of this module and its descendants to
  // dtype, in place (PyTorch's module.to(dtype)): the handles a module keeps (its `weight`
  // member, the optimizer's list) see the new values, gradients are cleared. Build the
  // optimizer after it. Modules that make tensors from their own options in forward (an
  // attention's mask, a KV cache) keep their options' dtype: give those the dtype you want.
  Module& to(DType dtype);
  // Total number of parameter elements.
  std::int64_t num_parameters() const;
  // A table of the parameters of this module and its descendants down to max_depth levels,
  // each with its share of the whole, as torchinfo prints it (nn/summary.hpp).
  std::string summary(int max_depth = 2) const;

  // One line of settings shown after the type name when printing: "in=3, out=4, bias=true".
  virtual std::string extra_repr() const { return ""; }

  // Dotted path from the root of the tree this module was registered in ("blocks.3.attn");
  // the root's is its type name.
  std::string path() const;
  bool is_root() const { return parent_ == nullptr; }
  // In anomaly mode, names this module as the caller of the ops run while the returned
  // object lives (forward() opens one); null and free otherwise.
  std::unique_ptr<ModuleScope> anomaly_scope() const;

  // Hooks on this module's forward (above). label names a hook in errors.
  HookHandle register_forward_pre_hook(ForwardPreHook hook, std::string label = "");
  HookHandle register_forward_hook(ForwardHook hook, std::string label = "");
  // Whether a forward pre-hook or forward hook is registered here (not in children). A module
  // that fuses its children's forwards into one op (FeedForward) runs them one by one instead
  // when they have hooks, so that the hooks see what they expect.
  bool has_forward_hooks() const;

 protected:
  // What every forward() does first and last: open the module's anomaly scope, run the
  // pre-hooks on the inputs, and at the end the forward hooks on the output. The inputs are the
  // forward's own variables, so that a pre-hook's replacement is what the forward computes with:
  //
  //   Tensor Linear::forward(const Tensor& input) {
  //     Tensor x = input;
  //     ForwardCall call(*this, {&x});                  // x may be replaced here
  //     return call.output(linear(x, weight, bias));    // and the output here
  //   }
  // The library's modules open one in forward(), so that forward() alone runs the hooks too. A
  // module of your own needs none: calling it, module(x), runs the hooks around its forward
  // (call() below), and a ForwardCall its forward opens while call() runs steps aside, so the
  // hooks run once either way. Without hooks it allocates nothing.
  class ForwardCall {
   public:
    ForwardCall(Module& module, std::initializer_list<Tensor*> inputs) : ForwardCall(module, inputs, false) {}
    ~ForwardCall();
    ForwardCall(const ForwardCall&) = delete;
    ForwardCall& operator=(const ForwardCall&) = delete;
    Tensor output(Tensor y);

   private:
    friend class Module;
    ForwardCall(Module& module, std::initializer_list<Tensor*> inputs, bool from_call);
    TensorList inputs() const;
    void run_pre_hooks();
    Module& module_;
    std::array<Tensor*, 8> inputs_{};
    std::size_t n_ = 0;
    std::unique_ptr<ModuleScope> scope_;
    bool steps_aside_ = false;        // call() runs this module's hooks already
    const Module* previous_ = nullptr;  // the module call() was running before this one
  };

  // PyTorch's __call__ for a forward of any signature: the pre-hooks on `inputs` (the
  // forward's own variables, which they may replace), then forward(), then the forward hooks
  // on its output. UnaryModule::operator() is call({&x}, [&] { return forward(x); }); a module
  // with several inputs gives itself the same one-line operator().
  template <typename F>
  Tensor call(std::initializer_list<Tensor*> inputs, F&& forward) {
    ForwardCall hooks(*this, inputs, true);
    return hooks.output(forward());
  }

  // Registers t as a parameter (requires grad) and returns the same handle.
  Tensor register_parameter(const std::string& name, Tensor t, bool requires_grad = true);
  Tensor register_buffer(const std::string& name, Tensor t);
  template <typename M>
  std::shared_ptr<M> register_module(const std::string& name, std::shared_ptr<M> module) {
    add_child(name, module);
    return module;
  }

 private:
  void add_child(const std::string& name, std::shared_ptr<Module> module);
  void check_new_name(const std::string& name) const;
  void collect(const std::string& prefix, bool recurse, bool buffers, NamedTensors& out) const;

  std::string type_name_;
  const Module* parent_ = nullptr;  // set by the parent's register_module
  std::string name_in_parent_;
  bool training_ = true;
  NamedTensors parameters_;
  NamedTensors buffers_;
  std::vector<std::pair<std::string, std::shared_ptr<Module>>> children_;
  std::shared_ptr<HookList<ForwardPreHook>> pre_hooks_;  // null until one is registered
  std::shared_ptr<HookList<ForwardHook>> forward_hooks_;
};

// A module with one tensor in and one tensor out: what Sequential chains.
class UnaryModule : public Module {
 public:
  using Module::Module;
  virtual Tensor forward(const Tensor& x) = 0;
  // Runs the forward pre-hooks, forward(x) and the forward hooks, as PyTorch's module(x) does
  // (docs/custom-module.md): a forward of your own needs no hook code.
  Tensor operator()(const Tensor& x) {
    Tensor input = x;
    return call({&input}, [&] { return forward(input); });
  }
};

// The module tree, one module per line with its parameters' shapes, like PyTorch's repr:
//   TransformerLM(
//     (tok_emb): Embedding(num=256, dim=64)  weight [256, 64]
//     ...
//   )
// ending its line.
std::ostream& operator<<(std::ostream& os, const Module& module);

}  // namespace tapegrad::nn
