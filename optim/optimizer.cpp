// optimizer.cpp — the parts every optimizer shares: groups, the step loop, zero_grad, the
// state snapshot and its validated restore, and the weight-decay split of a model.
#include "optimizer.hpp"

#include <exception>
#include <set>

#include "../autograd/cpu/blas.hpp"
#include "../autograd/cpu/parallel.hpp"
#include "../autograd/grad_mode.hpp"
#include "../autograd/profiler.hpp"
#include "../nn/embedding.hpp"

namespace tapegrad::optim {

NamedTensors numbered(const TensorList& params) {
  NamedTensors named;
  for (std::size_t i = 0; i < params.size(); ++i) named.emplace_back(std::to_string(i), params[i]);
  return named;
}

double hyper_parameter(const HyperParameters& hp, const std::string& name, const std::string& who) {
  for (const auto& [key, value] : hp)
    if (key == name) return value;
  throw ValueError(who + ": the hyper-parameter '" + name + "' is missing");
}

Tensor ParamState::buffer(const std::string& name) const {
  for (const auto& [key, t] : buffers)
    if (key == name) return t;
  return Tensor();
}

Optimizer::Optimizer(std::string name, std::vector<NamedTensors> groups)
    : name_(std::move(name)), groups_(std::move(groups)) {
  std::map<const TensorImpl*, std::string> seen;  // each tensor once, whatever its name
  for (std::size_t g = 0; g < groups_.size(); ++g) {
    for (std::size_t i = 0; i < groups_[g].size(); ++i) {
      const auto& [param_name, p] = groups_[g][i];
      const std::string what = "parameter '" + param_name + "'";
      if (!p.defined()) fail(what + " is undefined");
      if (!is_floating(p.dtype()))
        throw DTypeError(name_ + ": " + what + " is " + dtype_name(p.dtype()) + ", expected float32 or float64");
      if (!p.is_leaf()) fail(what + " is not a leaf (it has a grad_fn); optimize the leaf tensors");
      // The update kernels walk raw pointers: the elements must be one dense block.
      if (!p.is_contiguous()) fail(what + " of shape " + shape_str(p.shape()) + " is not contiguous");
      if (!index_.emplace(param_name, std::make_pair(g, i)).second)
        fail("the parameter name '" + param_name + "' appears twice");
      auto [it, fresh] = seen.emplace(&p.impl(), param_name);
      if (!fresh) fail(what + " is the same tensor as '" + it->second + "' (a tensor may appear only once)");
    }
  }
  if (index_.empty()) fail("got an empty parameter list");
  states_.resize(groups_.size());
  for (std::size_t g = 0; g < groups_.size(); ++g) states_[g].resize(groups_[g].size());
}

void Optimizer::fail(const std::string& what) const { throw ValueError(name_ + ": " + what); }

const NamedTensors& Optimizer::group_params(std::size_t group) const {
  if (group >= groups_.size())
    fail("group " + std::to_string(group) + " out of range (" + std::to_string(groups_.size()) + " groups)");
  return groups_[group];
}

void Optimizer::step() {
  profiler::Scope timed("optimizer.step", profiler::Phase::other);
  NoGradGuard no_grad;
  run_step_hooks(*pre_hooks_, "pre-hook");
  // Large parameters are updated one after the other, each by all threads (the update's own
  // parallel loop). The many small ones (biases, norm gains) are each below the size worth a
  // parallel loop, so instead they are spread over the threads, one parameter per task, in one
  // parallel region. Each parameter's update is independent of the others: the result is the
  // same for any thread count and order.
  std::vector<std::pair<std::size_t, std::size_t>> small;
  auto update_one = [&](std::size_t g, std::size_t i) {
    const Tensor& param = groups_[g][i].second;
    Tensor grad = param.grad();
    if (!grad.defined()) return;  // not reached by backward: no update, state untouched
    if (!grad.is_contiguous()) grad = grad.contiguous();
    ParamState& state = states_[g][i];
    ++state.step;
    update(g, param, grad, state);
  };
  for (std::size_t g = 0; g < groups_.size(); ++g)
    for (std::size_t i = 0; i < groups_[g].size(); ++i) {
      if (groups_[g][i].second.numel() > kParallelGrain) update_one(g, i);
      else small.emplace_back(g, i);
    }
  std::exception_ptr error;  // an exception must not leave an OpenMP region: rethrown below
  const auto n = static_cast<std::int64_t>(small.size());
  parallel_region_if(n > 8 && get_num_threads() > 1, [&] {
#pragma omp for schedule(dynamic, 4) nowait
    for (std::int64_t k = 0; k < n; ++k) {
      try {
        NoGradGuard worker_no_grad;  // grad mode is per thread
        update_one(small[k].first, small[k].second);
      } catch (...) {
#pragma omp critical(tapegrad_optimizer_error)
        if (!error) error = std::current_exception();
      }
    }
  });
  if (error) std::rethrow_exception(error);
  run_step_hooks(*post_hooks_, "post-hook");
}

HookHandle Optimizer::register_step_pre_hook(StepHook hook, std::string label) {
  return HookHandle(pre_hooks_, pre_hooks_->add(std::move(hook), std::move(label)));
}

HookHandle Optimizer::register_step_post_hook(StepHook hook, std::string label) {
  return HookHandle(post_hooks_, post_hooks_->add(std::move(hook), std::move(label)));
}

void Optimizer::run_step_hooks(const HookList<StepHook>& list, const char* kind) {
  const auto hooks = list.snapshot();  // a hook may remove itself
  for (std::size_t i = 0; i < hooks.size(); ++i) {
    try {
      hooks[i].fn(*this);
    } catch (const std::exception& e) {
      fail(std::string("step ") + kind + (hooks[i].label.empty() ? " " + std::to_string(i + 1) : " '" + hooks[i].label + "'") +
           " threw: " + e.what());
    }
  }
}

void Optimizer::zero_grad() {
  profiler::Scope timed("optimizer.zero_grad", profiler::Phase::other);
  for (auto& group : groups_)
    for (auto& [_, p] : group) p.reset_grad();
}

const ParamState& Optimizer::param_state(const std::string& name) const {
  auto it = index_.find(name);
  if (it == index_.end()) fail("no parameter named '" + name + "'");
  return states_[it->second.first][it->second.second];
}

OptimizerState Optimizer::state_dict() const {
  OptimizerState out;
  out.optimizer = name_;
  for (std::size_t g = 0; g < groups_.size(); ++g) {
    OptimizerState::Group group;
    for (const auto& [param_name, _] : groups_[g]) group.params.push_back(param_name);
    group.hyper_parameters = hyper_parameters(g);
    out.groups.push_back(std::move(group));
    for (std::size_t i = 0; i < groups_[g].size(); ++i) {
      const ParamState& s = states_[g][i];
      if (s.step == 0) continue;
      ParamState copy;
      copy.step = s.step;
      for (const auto& [key, t] : s.buffers) copy.buffers.emplace_back(key, t.clone());
      out.params.emplace_back(groups_[g][i].first, std::move(copy));
    }
  }
  return out;
}

namespace {

std::string join(const std::vector<std::string>& names) {
  std::string s = "[";
  for (std::size_t i = 0; i < names.size(); ++i) s += (i ? ", " : "") + names[i];
  return s + "]";
}

std::vector<std::string> keys(const HyperParameters& hp) {
  std::vector<std::string> out;
  for (const auto& [key, _] : hp) out.push_back(key);
  return out;
}

}  // namespace

void Optimizer::load_state_dict(const OptimizerState& state) {
  const std::string who = "load_state_dict: ";
  if (state.optimizer != name_) fail(who + "the state is from " + state.optimizer + ", not " + name_);
  if (state.groups.size() != groups_.size())
    fail(who + "the state has " + std::to_string(state.groups.size()) + " groups, this optimizer " +
         std::to_string(groups_.size()));
  for (std::size_t g = 0; g < groups_.size(); ++g) {
    std::vector<std::string> mine;
    for (const auto& [param_name, _] : groups_[g]) mine.push_back(param_name);
    if (state.groups[g].params != mine)
      fail(who + "group " + std::to_string(g) + " holds " + join(state.groups[g].params) + " in the state but " +
           join(mine) + " here");
    const std::vector<std::string> expected = keys(hyper_parameters(g)), got = keys(state.groups[g].hyper_parameters);
    if (got != expected)
      fail(who + "group " + std::to_string(g) + " hyper-parameters are " + join(got) + ", expected " + join(expected));
  }

  // Set the new hyper-parameters (they decide which buffers a state must have), build the new
  // per-parameter states aside, and swap them in only when everything checked out.
  std::vector<HyperParameters> previous;
  for (std::size_t g = 0; g < groups_.size(); ++g) previous.push_back(hyper_parameters(g));
  try {
    for (std::size_t g = 0; g < groups_.size(); ++g) set_hyper_parameters(g, state.groups[g].hyper_parameters);
    std::vector<std::vector<ParamState>> fresh(groups_.size());
    for (std::size_t g = 0; g < groups_.size(); ++g) fresh[g].resize(groups_[g].size());
    for (const auto& [param_name, s] : state.params) {
      auto it = index_.find(param_name);
      if (it == index_.end()) fail(who + "the state has an entry for '" + param_name + "', which is not a parameter here");
      const auto [g, i] = it->second;
      ParamState& target = fresh[g][i];
      if (target.step != 0) fail(who + "'" + param_name + "' appears twice in the state");
      if (s.step <= 0) fail(who + "'" + param_name + "' has step " + std::to_string(s.step) + " (must be >= 1)");
      std::vector<std::string> names;
      for (const auto& [key, _] : s.buffers) names.push_back(key);
      if (names != buffer_names(g))
        fail(who + "'" + param_name + "' has buffers " + join(names) + ", expected " + join(buffer_names(g)));
      const Tensor& p = groups_[g][i].second;
      for (const auto& [key, t] : s.buffers) {
        if (!t.defined()) fail(who + "'" + param_name + "' buffer '" + key + "' is undefined");
        if (t.shape() != p.shape() || t.dtype() != p.dtype())
          fail(who + "'" + param_name + "' buffer '" + key + "' is " + shape_str(t.shape()) + " " +
               dtype_name(t.dtype()) + ", the parameter is " + shape_str(p.shape()) + " " + dtype_name(p.dtype()));
        target.buffers.emplace_back(key, t.detach().clone());  // our own copy: steps update it in place
      }
      target.step = s.step;
    }
    states_ = std::move(fresh);
  } catch (...) {
    for (std::size_t g = 0; g < groups_.size(); ++g) set_hyper_parameters(g, previous[g]);
    throw;
  }
}

namespace {

void collect_embedding_weights(const nn::Module& module, std::set<const TensorImpl*>& out) {
  if (auto* embedding = dynamic_cast<const nn::Embedding*>(&module)) out.insert(&embedding->weight.impl());
  for (const auto& [_, child] : module.named_children()) collect_embedding_weights(*child, out);
}

}  // namespace

WeightDecaySplit split_for_weight_decay(const nn::Module& model, bool decay_embeddings) {
  std::set<const TensorImpl*> embeddings, seen;
  collect_embedding_weights(model, embeddings);
  WeightDecaySplit split;
  for (const auto& [name, p] : model.named_parameters()) {
    if (!seen.insert(&p.impl()).second) continue;  // shared weight, listed under its first name
    const bool is_embedding = embeddings.count(&p.impl()) != 0;
    const bool decays = p.dim() >= 2 && (decay_embeddings || !is_embedding);
    (decays ? split.decay : split.no_decay).emplace_back(name, p);
  }
  return split;
}

}  // namespace tapegrad::optim
