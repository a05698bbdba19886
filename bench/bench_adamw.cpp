// bench_adamw.cpp — what a flat parameter buffer would save AdamW: one optimizer step over a
// transformer LM's parameters as they are (one update loop per parameter tensor, train_step's
// two weight-decay groups), against the same numbers of elements as one tensor per group (the
// single vectorized loop per group that a flat buffer would give). The difference is the whole
// per-parameter overhead, the most a flat buffer can save. Args: {config, flat}, config 0, 1, 2
// = S, M, G of train_step (bench/README.md).
//
// BM_adamw_bytes_streamed is the update's memory floor: the same bytes as one step (θ, g, m and
// v read, θ, m and v written: 28 a parameter) moved by a loop of multiply-adds only, with no
// division or square root. Where AdamW's step takes about as long, it is bound by memory, and no
// rewrite of its arithmetic can make it faster (G: bench/history/README.md, "a twelfth day").
//
//   OMP_NUM_THREADS=1 bench_adamw [benchmark flags]
#include <cstdint>
#include <string>
#include <vector>

#include <benchmark/benchmark.h>

#include <tapegrad/tapegrad.hpp>

#include "bench_configs.hpp"

using namespace tapegrad;

namespace {

// train_step's S, M and G models.
nn::TransformerLMConfig config_of(std::int64_t which) {
  return bench::lm_config_of(bench::config_named(which == 0 ? "S" : which == 1 ? "M" : "G"));
}

// Each group's parameters as one tensor of their total size, named after the group.
std::vector<optim::ParamGroup<optim::AdamOptions>> flattened(
    const std::vector<optim::ParamGroup<optim::AdamOptions>>& groups) {
  std::vector<optim::ParamGroup<optim::AdamOptions>> flat;
  for (const auto& g : groups) {
    std::int64_t n = 0;
    for (const auto& [name, p] : g.params) n += p.numel();
    flat.push_back({{{"group" + std::to_string(flat.size()), zeros({n}).requires_grad_()}}, g.options});
  }
  return flat;
}

void BM_adamw_step(benchmark::State& state) {
  manual_seed(0);
  nn::TransformerLM model(config_of(state.range(0)));
  auto groups = optim::weight_decay_groups(model, optim::AdamOptions(3e-4).weight_decay(0.1));
  if (state.range(1) != 0) groups = flattened(groups);
  std::int64_t params = 0, tensors = 0;
  Generator gen(1);
  for (const auto& g : groups)
    for (const auto& [name, p] : g.params) {
      p.impl().grad = mul(randn(p.shape(), gen), 1e-3).impl_ptr();
      params += p.numel();
      ++tensors;
    }
  optim::AdamW opt(groups);
  opt.step();  // the moments are allocated here, not in the timed loop
  for (auto _ : state) {
    opt.step();
    benchmark::ClobberMemory();
  }
  state.counters["params"] = static_cast<double>(params);
  state.counters["tensors"] = static_cast<double>(tensors);
}

// One pass that loads and stores what AdamW's step does, on the program's threads.
void BM_adamw_bytes_streamed(benchmark::State& state) {
  const auto n = nn::TransformerLM(config_of(state.range(0))).num_parameters();
  std::vector<float> theta(n, 1.0f), grad(n, 1e-3f), first_moment(n, 0.0f), second_moment(n, 0.0f);
  float* __restrict t = theta.data();
  const float* __restrict g = grad.data();
  float* __restrict m1 = first_moment.data();
  float* __restrict m2 = second_moment.data();
  for (auto _ : state) {
#pragma omp parallel for simd schedule(static)
    for (std::int64_t i = 0; i < n; ++i) {
      const float first = 0.9f * m1[i] + 0.1f * g[i], second = 0.999f * m2[i] + 0.001f * g[i];
      m1[i] = first, m2[i] = second;
      t[i] -= 1e-4f * (first + second);
    }
    benchmark::ClobberMemory();
  }
  state.counters["params"] = static_cast<double>(n);
  state.counters["bytes_per_second"] = benchmark::Counter(28.0 * static_cast<double>(n),
                                                          benchmark::Counter::kIsIterationInvariantRate);
}

}  // namespace

BENCHMARK(BM_adamw_bytes_streamed)
    ->Arg(0)->Arg(1)->Arg(2)
    ->ArgName("config")
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

BENCHMARK(BM_adamw_step)
    ->ArgsProduct({{0, 1, 2}, {0, 1}})
    ->ArgNames({"config", "flat"})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

BENCHMARK_MAIN();
