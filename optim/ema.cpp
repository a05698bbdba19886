// ema.cpp — the moving average's update, its state and the swap.
#include "ema.hpp"

#include <algorithm>
#include <map>
#include <set>

#include "../autograd/cpu/parallel.hpp"
#include "../autograd/dtype.hpp"
#include "../autograd/errors.hpp"

namespace tapegrad::optim {

ExponentialMovingAverage::ExponentialMovingAverage(nn::NamedTensors params, double decay)
    : decay_(decay) {
  // A tensor listed twice (shared weights) is averaged once: twice would update it twice and
  // swap it back.
  std::set<const void*> seen;
  for (auto& entry : params)
    if (seen.insert(entry.second.raw_data()).second) params_.push_back(std::move(entry));
  if (!(decay >= 0.0 && decay < 1.0))
    throw ValueError("ExponentialMovingAverage: decay must be in [0, 1), got " + std::to_string(decay));
  for (const auto& [name, p] : params_)
    if (!p.is_contiguous()) throw ValueError("ExponentialMovingAverage: the parameter " + name + " is not contiguous");
  averages_.reserve(params_.size());
  for (const auto& [name, p] : params_) averages_.push_back(p.detach().clone());
}

void ExponentialMovingAverage::update() {
  ++num_updates_;
  for (std::size_t i = 0; i < params_.size(); ++i) {
    const Tensor& p = params_[i].second;
    Tensor& avg = averages_[i];
    if (num_updates_ == 1) {  // AveragedModel's first update: a copy
      avg.copy_(p.detach());
      continue;
    }
    dispatch_floating(p.dtype(), "ExponentialMovingAverage.update", [&]<typename T>() {
      const T* theta = p.data<T>();
      T* a = avg.data<T>();
      const T weight = static_cast<T>(1.0 - decay_);  // lerp(a, θ, w) = a + w·(θ − a), w < 0.5
      const std::int64_t n = p.numel();
      parallel_region_if(n > kParallelGrain, [&] {
#pragma omp for nowait
        for (std::int64_t k = 0; k < n; ++k) a[k] = a[k] + weight * (theta[k] - a[k]);
      });
    });
  }
}

nn::NamedTensors ExponentialMovingAverage::averages() const {
  nn::NamedTensors out;
  out.reserve(params_.size());
  for (std::size_t i = 0; i < params_.size(); ++i) out.emplace_back(params_[i].first, averages_[i]);
  return out;
}

void ExponentialMovingAverage::load_averages(const nn::NamedTensors& averages, std::int64_t num_updates) {
  std::map<std::string, const Tensor*> by_name;
  for (const auto& [name, t] : averages) by_name[name] = &t;
  for (std::size_t i = 0; i < params_.size(); ++i) {
    const auto& [name, p] = params_[i];
    const auto it = by_name.find(name);
    if (it == by_name.end()) throw ValueError("ExponentialMovingAverage: no saved average for " + name);
    const Tensor& saved = *it->second;
    if (saved.shape() != p.shape() || saved.dtype() != p.dtype())
      throw ValueError("ExponentialMovingAverage: the saved average of " + name + " is " + shape_str(saved.shape()) +
                       " " + dtype_name(saved.dtype()) + ", the parameter " + shape_str(p.shape()) + " " +
                       dtype_name(p.dtype()));
  }
  for (std::size_t i = 0; i < params_.size(); ++i) averages_[i].copy_(*by_name.at(params_[i].first));
  num_updates_ = num_updates;
}

void ExponentialMovingAverage::swap_with_parameters() {
  for (std::size_t i = 0; i < params_.size(); ++i) {
    const Tensor& p = params_[i].second;
    const auto bytes = static_cast<std::size_t>(p.numel()) * size_of(p.dtype());
    auto* x = static_cast<unsigned char*>(p.raw_data());
    auto* y = static_cast<unsigned char*>(averages_[i].raw_data());
    std::swap_ranges(x, x + bytes, y);
    p.increment_version();  // both written in place: a graph saved before refuses to backward
    averages_[i].increment_version();
  }
}

}  // namespace tapegrad::optim
