// sgd.cpp — SGD: the fused update kernel (one pass over raw pointers per parameter, no
// temporary tensors) and the option checks. The formulas are in sgd.hpp; the order of the
// floating-point operations follows torch.optim.SGD's so that float64 results agree.
#include "sgd.hpp"

#include "../autograd/cpu/parallel.hpp"

namespace tapegrad::optim {

namespace {

// theta, grad, momentum_buffer: (n). momentum_buffer is null when momentum is 0; when
// first_step, it is filled with d instead of decayed. The branches test flags that are the
// same for every element; the loop is bound by memory traffic, not arithmetic.
template <typename T>
void sgd_update(T* theta, const T* grad, T* momentum_buffer, std::int64_t n, T lr, T weight_decay, T momentum,
                T one_minus_dampening, bool nesterov, bool first_step) {
  parallel_region_if(n > kParallelGrain, [&] {
#pragma omp for nowait
    for (std::int64_t i = 0; i < n; ++i) {
      T d = grad[i];
      if (weight_decay != 0) d = d + weight_decay * theta[i];
      if (momentum_buffer) {
        T& b = momentum_buffer[i];
        b = first_step ? d : b * momentum + one_minus_dampening * d;
        d = nesterov ? d + momentum * b : b;
      }
      theta[i] = theta[i] - lr * d;
    }
  });
}

std::vector<NamedTensors> params_of(const std::vector<ParamGroup<SGDOptions>>& groups) {
  std::vector<NamedTensors> out;
  for (const auto& g : groups) out.push_back(g.params);
  return out;
}

}  // namespace

SGD::SGD(NamedTensors params, const SGDOptions& options)
    : SGD(std::vector<ParamGroup<SGDOptions>>{{std::move(params), options}}) {}

SGD::SGD(std::vector<ParamGroup<SGDOptions>> groups) : Optimizer("SGD", params_of(groups)) {
  for (const auto& g : groups) {
    check(g.options);
    options_.push_back(g.options);
  }
}

void SGD::check(const SGDOptions& o) const {
  // Written as !(x >= 0) so that NaN fails too.
  if (!(o.lr() >= 0)) fail("invalid learning rate " + number_str(o.lr()) + " (must be >= 0)");
  if (!(o.momentum() >= 0)) fail("invalid momentum " + number_str(o.momentum()) + " (must be >= 0)");
  if (!(o.dampening() >= 0 && o.dampening() <= 1))
    fail("invalid dampening " + number_str(o.dampening()) + " (must be in [0, 1])");
  if (!(o.weight_decay() >= 0)) fail("invalid weight_decay " + number_str(o.weight_decay()) + " (must be >= 0)");
  if (o.nesterov() && (o.momentum() <= 0 || o.dampening() != 0))
    fail("Nesterov momentum requires a momentum > 0 and zero dampening (got momentum " + number_str(o.momentum()) +
         ", dampening " + number_str(o.dampening()) + ")");
}

const SGDOptions& SGD::options(std::size_t group) const {
  group_params(group);  // range check
  return options_[group];
}

void SGD::set_options(std::size_t group, const SGDOptions& options) {
  group_params(group);
  check(options);
  options_[group] = options;
}

void SGD::set_lr(std::size_t group, double lr) { set_options(group, SGDOptions(options(group)).lr(lr)); }

HyperParameters SGD::hyper_parameters(std::size_t group) const {
  const SGDOptions& o = options(group);
  return {{"lr", o.lr()},
          {"momentum", o.momentum()},
          {"dampening", o.dampening()},
          {"weight_decay", o.weight_decay()},
          {"nesterov", o.nesterov() ? 1.0 : 0.0}};
}

void SGD::set_hyper_parameters(std::size_t group, const HyperParameters& hp) {
  auto get = [&](const char* key) { return hyper_parameter(hp, key, "SGD"); };
  set_options(group, SGDOptions(get("lr"))
                         .momentum(get("momentum"))
                         .dampening(get("dampening"))
                         .weight_decay(get("weight_decay"))
                         .nesterov(get("nesterov") != 0));
}

std::vector<std::string> SGD::buffer_names(std::size_t group) const {
  if (options(group).momentum() == 0) return {};
  return {"momentum_buffer"};
}

void SGD::update(std::size_t group, const Tensor& param, const Tensor& grad, ParamState& state) {
  const SGDOptions& o = options_[group];
  Tensor buffer;
  bool first_step = false;
  if (o.momentum() != 0) {
    buffer = state.buffer("momentum_buffer");
    if (!buffer.defined()) {
      buffer = Tensor::empty(param.shape(), param.dtype());  // filled by the kernel
      state.buffers.emplace_back("momentum_buffer", buffer);
      first_step = true;
    }
  }
  dispatch_floating(param.dtype(), "SGD.step", [&]<typename T>() {
    sgd_update<T>(param.data<T>(), grad.data<T>(), buffer.defined() ? buffer.data<T>() : nullptr, param.numel(),
                  T(o.lr()), T(o.weight_decay()), T(o.momentum()), T(1 - o.dampening()), o.nesterov(), first_step);
  });
  // Written in place: a graph that saved the old values refuses to backward (Saves, node.hpp).
  param.increment_version();
}

}  // namespace tapegrad::optim
