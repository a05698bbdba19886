// bench_adamw.cpp — what a flat parameter buffer would save AdamW: one optimizer step over a
// transformer LM's parameters as they are (one update loop per parameter tensor, train_step's
// two weight-decay groups), against the same numbers of elements as one tensor per group (the
// single vectorized loop per group that a flat buffer would give). The difference is the whole
// per-parameter overhead, the most a flat buffer can save. Args: {config, flat}, config 0, 1, 2
// = S, M, G of train_step (bench/README.md).
//
//   OMP_NUM_THREADS=1 bench_adamw [benchmark flags]
#include <string>

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

}  // namespace

BENCHMARK(BM_adamw_step)
    ->ArgsProduct({{0, 1, 2}, {0, 1}})
    ->ArgNames({"config", "flat"})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

BENCHMARK_MAIN();
