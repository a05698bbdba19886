// bench_attention.cpp — scaled_dot_product_attention forward + backward with each kernel pair
// (AttentionOptions::kernel: materialized, flash), the figures behind the rule automatic
// follows (kFlashAttentionMinScores in autograd/ops.hpp; the tables in
// autograd/cpu/attention_flash.cpp). B = 1, H = 2, D = 64, float32; args {T, causal, flash}.
// The FLOP counter counts the gemms of the op (forward 2, backward 5, of 2·T²·D each; half
// under a causal mask), so it reads as the rate those products run at.
//
//   TAPEGRAD_NUM_THREADS=1 bench_attention [benchmark flags, e.g. --benchmark_filter=/2048/]
#include <benchmark/benchmark.h>

#include <tapegrad/tapegrad.hpp>

using namespace tapegrad;

namespace {

constexpr std::int64_t kB = 1, kH = 2, kD = 64;

void BM_attention_forward_backward(benchmark::State& state) {
  const std::int64_t T = state.range(0);
  AttentionOptions o;
  o.causal = state.range(1) != 0;
  o.kernel = state.range(2) != 0 ? AttentionKernel::flash : AttentionKernel::materialized;
  Generator gen(1);
  const Tensor q = randn({kB, kH, T, kD}, gen).requires_grad_(), k = randn({kB, kH, T, kD}, gen).requires_grad_(),
               v = randn({kB, kH, T, kD}, gen).requires_grad_(), dout = randn({kB, kH, T, kD}, gen);
  for (auto _ : state) {
    const Tensor out = scaled_dot_product_attention(q, k, v, o);
    out.backward(dout);  // the gradients accumulate into q, k, v: the same work every time
    benchmark::ClobberMemory();
  }
  const double gemm = 2.0 * static_cast<double>(T) * static_cast<double>(T) * kD * (o.causal ? 0.5 : 1.0);
  state.counters["FLOP"] = benchmark::Counter(7 * gemm * kB * kH, benchmark::Counter::kIsIterationInvariantRate,
                                              benchmark::Counter::kIs1000);
  state.SetLabel(o.kernel == AttentionKernel::flash ? "flash" : "materialized");
}

void shapes(benchmark::internal::Benchmark* b) {
  for (const std::int64_t T : {128, 256, 384, 512, 1024, 2048})
    for (const std::int64_t causal : {1, 0})
      for (const std::int64_t flash : {0, 1}) b->Args({T, causal, flash});
  b->ArgNames({"T", "causal", "flash"})->Unit(benchmark::kMillisecond)->UseRealTime();
}

}  // namespace

BENCHMARK(BM_attention_forward_backward)->Apply(shapes);

BENCHMARK_MAIN();
