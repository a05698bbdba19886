// optimizer.hpp — Optimizer: the base of SGD, Adam and AdamW, over named parameter groups.
//
// An optimizer holds its parameters in groups; each group has its own hyper-parameters (lr,
// weight decay, betas, ...), as torch.optim's param_groups. Parameters are named (the dotted
// names of Module::named_parameters()), and the per-parameter state ("exp_avg",
// "momentum_buffer", ...) is keyed by those names, so a checkpoint maps to PyTorch's state
// one to one. The training loop:
//
//   optim::AdamW opt(optim::weight_decay_groups(*model, optim::AdamOptions(3e-4).weight_decay(0.1)));
//   for (step ...) {
//     opt.zero_grad();                    // grads -> undefined (PyTorch's set_to_none=True)
//     loss = ...; loss.backward();        // grads accumulate (+=) into the parameters
//     opt.step();                         // one fused in-place update per parameter
//   }
//
// Gradient accumulation: call backward() on k micro-batches before one step(), each loss
// divided by k (mean over the whole batch); the summed gradients then equal those of one
// batch k times larger. What this is not: a closure-based (LBFGS) or sparse optimizer.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "../autograd/tensor.hpp"
#include "../nn/module.hpp"

namespace tapegrad::optim {

using nn::NamedTensors;

// A group's settings as (name, value) pairs in a fixed order, booleans as 0/1:
// {{"lr", 1e-3}, {"beta1", 0.9}, ...}. What state_dict() saves and load_state_dict() restores.
using HyperParameters = std::vector<std::pair<std::string, double>>;

// The value called name in hp; ValueError naming `who` when it is absent.
double hyper_parameter(const HyperParameters& hp, const std::string& name, const std::string& who);

// A plain list of parameters, as PyTorch's optimizers take it (model->parameters()), named by
// position, "0", "1", ..., as torch.optim's state_dict numbers them. The optimizers take such a
// list directly: optim::AdamW opt(model->parameters(), optim::AdamOptions(1e-3)).
NamedTensors numbered(const TensorList& params);

// Parameters that share one set of hyper-parameters.
template <typename Options>
struct ParamGroup {
  NamedTensors params;
  Options options;
};

// What an optimizer keeps for one parameter.
struct ParamState {
  std::int64_t step = 0;  // updates applied to this parameter (0: never stepped, no buffers)
  NamedTensors buffers;   // "exp_avg", "exp_avg_sq", "max_exp_avg_sq", "momentum_buffer"
  // The buffer called name; undefined when absent.
  Tensor buffer(const std::string& name) const;
};

// Everything an optimizer needs to continue exactly where it stopped.
struct OptimizerState {
  struct Group {
    std::vector<std::string> params;  // the group's parameter names, in order
    HyperParameters hyper_parameters;
  };
  std::string optimizer;  // "SGD", "Adam", "AdamW"
  std::vector<Group> groups;
  // Parameters stepped at least once, in group order; their buffers are copies.
  std::vector<std::pair<std::string, ParamState>> params;
};

class Optimizer {
 public:
  virtual ~Optimizer() = default;
  Optimizer(const Optimizer&) = delete;
  Optimizer& operator=(const Optimizer&) = delete;

  // "SGD", "Adam", "AdamW".
  const std::string& name() const { return name_; }

  // One update of every parameter that has a gradient (those without are skipped, as in
  // PyTorch). Runs under NoGradGuard: nothing is recorded. The step's pre-hooks run first, its
  // post-hooks after every update, each in registration order and also under NoGradGuard.
  void step();

  // A function run before or after every step(), as PyTorch's register_step_pre_hook and
  // register_step_post_hook: what a scheme must do to the weights around each update. nGPT,
  // for one, puts every weight row back on the unit sphere after each step:
  //   opt.register_step_post_hook([&](optim::Optimizer&) { renormalize(model); });
  // An exception from a hook leaves step() (after the updates, for a post-hook), naming the
  // hook by its label. The handle removes it; it outlives the optimizer harmlessly.
  using StepHook = std::function<void(Optimizer&)>;
  HookHandle register_step_pre_hook(StepHook hook, std::string label = "");
  HookHandle register_step_post_hook(StepHook hook, std::string label = "");
  // Sets every parameter's gradient to undefined (PyTorch's zero_grad(set_to_none=True)).
  void zero_grad();

  std::size_t num_groups() const { return groups_.size(); }
  const NamedTensors& group_params(std::size_t group) const;

  // The learning rate of a group (what a schedule sets).
  virtual double lr(std::size_t group) const = 0;
  virtual void set_lr(std::size_t group, double lr) = 0;
  // A group's settings by name, e.g. {{"lr", 0.1}, {"momentum", 0.9}, ...}.
  virtual HyperParameters hyper_parameters(std::size_t group) const = 0;

  // The state of one parameter by name (step 0, no buffers, before its first update).
  const ParamState& param_state(const std::string& name) const;

  // A snapshot of the whole state: later steps do not change it. Named as PyTorch's
  // optimizer.state_dict(), which holds the same things (param_groups and per-parameter state).
  OptimizerState state_dict() const;
  // Restores a snapshot taken from an optimizer of the same kind over the same parameters
  // (names, order and shapes are checked). Hyper-parameters are restored too. All or nothing:
  // on error the optimizer is left as it was.
  void load_state_dict(const OptimizerState& state);

  // The names before PyTorch's, kept for one release so that code using them still builds.
  [[deprecated("use state_dict()")]] OptimizerState state() const { return state_dict(); }
  [[deprecated("use load_state_dict()")]] void load_state(const OptimizerState& state) { load_state_dict(state); }

 protected:
  // groups: each group's named parameters. Checks that every parameter is a defined,
  // contiguous float32/float64 leaf, and that no name or tensor appears twice.
  Optimizer(std::string name, std::vector<NamedTensors> groups);

  // Checks hp (names and values) and makes it group g's settings.
  virtual void set_hyper_parameters(std::size_t group, const HyperParameters& hp) = 0;
  // The buffers a parameter of group g owns once stepped (to validate a loaded state).
  virtual std::vector<std::string> buffer_names(std::size_t group) const = 0;
  // Updates param in place from grad (same shape and dtype, contiguous). state.step has
  // already been incremented: it counts this update.
  virtual void update(std::size_t group, const Tensor& param, const Tensor& grad, ParamState& state) = 0;

  // "<name>: <what>" as a ValueError.
  [[noreturn]] void fail(const std::string& what) const;

 private:
  // Runs the hooks of `list` ("pre" or "post" in errors).
  void run_step_hooks(const HookList<StepHook>& list, const char* kind);

  std::string name_;
  std::shared_ptr<HookList<StepHook>> pre_hooks_ = std::make_shared<HookList<StepHook>>();
  std::shared_ptr<HookList<StepHook>> post_hooks_ = std::make_shared<HookList<StepHook>>();
  std::vector<NamedTensors> groups_;
  std::vector<std::vector<ParamState>> states_;                    // parallel to groups_
  std::map<std::string, std::pair<std::size_t, std::size_t>> index_;  // name -> (group, position)
};

// The usual split for weight decay (GPT-2, BERT, nanoGPT): parameters with 2 or more dims
// (Linear weights) decay; 0-d and 1-d ones (norm gains, biases, scalar gates) do not.
// Embedding tables decay only when decay_embeddings is true. A tensor registered under two
// names (shared weights) is listed once, under its first name.
struct WeightDecaySplit {
  NamedTensors decay;
  NamedTensors no_decay;
};
WeightDecaySplit split_for_weight_decay(const nn::Module& model, bool decay_embeddings = false);

// The two groups built from that split, in this order: group 0 (decay) with `options`, group 1
// (no decay) with `options` and weight decay 0. Either may be empty.
//
//   optim::AdamW opt(optim::weight_decay_groups(*model, optim::AdamOptions(3e-4).weight_decay(0.1)));
template <typename Options>
std::vector<ParamGroup<Options>> weight_decay_groups(const nn::Module& model, const Options& options,
                                                     bool decay_embeddings = false) {
  WeightDecaySplit split = split_for_weight_decay(model, decay_embeddings);
  Options no_decay_options = options;
  no_decay_options.weight_decay(0.0);
  return {{std::move(split.decay), options}, {std::move(split.no_decay), no_decay_options}};
}

}  // namespace tapegrad::optim
