// bench_matmul.cpp — what tapegrad's matmul and linear cost on top of the gemms they run.
//
//   forward:  C = A·B                      1 gemm,  2·M·K·N flops
//   backward: dA = dC·Bᵀ,  dB = Aᵀ·dC      2 gemms, 4·M·K·N flops
// Each shape is timed as raw cblas_sgemm (forward only, then the 3 gemms of forward+backward
// on preallocated buffers: the floor) and as tapegrad (leaves requiring grad,
// out.backward(dC)): the gap is tapegrad's overhead. The FLOP counter is a rate (FLOP/s).
// This file includes cblas.h itself: it is a benchmark, not the library.
//
//   bench_matmul [--threads=N] [benchmark flags]      (or TAPEGRAD_NUM_THREADS=N)
#include <benchmark/benchmark.h>
#include <cblas.h>

#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include <tapegrad/tapegrad.hpp>

using namespace tapegrad;

namespace {

// Float32 normals (not zeros: a kernel must not get to skip anything), one seed per operand.
Tensor random_matrix(std::int64_t rows, std::int64_t cols, std::uint64_t seed) {
  Generator gen(seed);
  return randn({rows, cols}, gen, DType::float32);
}

// A raw buffer holding the same values as a tensor.
std::vector<float> buffer_of(const Tensor& t) { return t.to_vector<float>(); }

void set_flops(benchmark::State& state, double flops_per_iteration) {
  state.counters["FLOP"] = benchmark::Counter(flops_per_iteration, benchmark::Counter::kIsIterationInvariantRate,
                                              benchmark::Counter::kIs1000);
}

// Benchmark args are {M, K, N}.
struct Dims {
  std::int64_t M, K, N;
  explicit Dims(const benchmark::State& state) : M(state.range(0)), K(state.range(1)), N(state.range(2)) {}
  double gemm_flops() const { return 2.0 * static_cast<double>(M) * static_cast<double>(K) * static_cast<double>(N); }
};

// ---------------------------------------------------------------- matmul: C (M, N) = A (M, K) · B (K, N)

void BM_sgemm_forward(benchmark::State& state) {
  const Dims d(state);
  std::vector<float> a = buffer_of(random_matrix(d.M, d.K, 1)), b = buffer_of(random_matrix(d.K, d.N, 2));
  std::vector<float> c(d.M * d.N);
  for (auto _ : state) {
    // C (M, N) = A (M, K) · B (K, N)
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, d.M, d.N, d.K, 1.0f, a.data(), d.K, b.data(), d.N,
                0.0f, c.data(), d.N);
    benchmark::DoNotOptimize(c.data());
    benchmark::ClobberMemory();
  }
  set_flops(state, d.gemm_flops());
}

void BM_sgemm_forward_backward(benchmark::State& state) {
  const Dims d(state);
  std::vector<float> a = buffer_of(random_matrix(d.M, d.K, 1)), b = buffer_of(random_matrix(d.K, d.N, 2));
  std::vector<float> dc = buffer_of(random_matrix(d.M, d.N, 3));
  std::vector<float> c(d.M * d.N), da(d.M * d.K), db(d.K * d.N);
  for (auto _ : state) {
    // C (M, N) = A (M, K) · B (K, N)
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, d.M, d.N, d.K, 1.0f, a.data(), d.K, b.data(), d.N,
                0.0f, c.data(), d.N);
    // dA (M, K) = dC (M, N) · Bᵀ (N, K)
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, d.M, d.K, d.N, 1.0f, dc.data(), d.N, b.data(), d.N,
                0.0f, da.data(), d.K);
    // dB (K, N) = Aᵀ (K, M) · dC (M, N)
    cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, d.K, d.N, d.M, 1.0f, a.data(), d.K, dc.data(), d.N,
                0.0f, db.data(), d.N);
    benchmark::DoNotOptimize(c.data());
    benchmark::DoNotOptimize(da.data());
    benchmark::DoNotOptimize(db.data());
    benchmark::ClobberMemory();
  }
  set_flops(state, 3 * d.gemm_flops());
}

void BM_tapegrad_matmul_forward(benchmark::State& state) {
  const Dims d(state);
  const Tensor a = random_matrix(d.M, d.K, 1), b = random_matrix(d.K, d.N, 2);
  for (auto _ : state) {
    NoGradGuard no_grad;  // inference: no node recorded
    Tensor c = matmul(a, b);
    benchmark::DoNotOptimize(c.raw_data());
  }
  set_flops(state, d.gemm_flops());
}

void BM_tapegrad_matmul_forward_backward(benchmark::State& state) {
  const Dims d(state);
  Tensor a = random_matrix(d.M, d.K, 1).requires_grad_(), b = random_matrix(d.K, d.N, 2).requires_grad_();
  const Tensor dc = random_matrix(d.M, d.N, 3);
  for (auto _ : state) {
    // zero_grad as set-to-None (PyTorch's default): backward writes fresh gradients
    a.reset_grad();
    b.reset_grad();
    Tensor c = matmul(a, b);
    c.backward(dc);
    benchmark::DoNotOptimize(a.grad().raw_data());
    benchmark::DoNotOptimize(b.grad().raw_data());
  }
  set_flops(state, 3 * d.gemm_flops());
}

// ---------------------------------------------------------------- linear: y (M, N) = x (M, K) · Wᵀ, W (N, K)

void BM_sgemm_linear_forward(benchmark::State& state) {
  const Dims d(state);
  std::vector<float> x = buffer_of(random_matrix(d.M, d.K, 1)), w = buffer_of(random_matrix(d.N, d.K, 2));
  std::vector<float> y(d.M * d.N);
  for (auto _ : state) {
    // y (M, N) = x (M, K) · Wᵀ (K, N)
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, d.M, d.N, d.K, 1.0f, x.data(), d.K, w.data(), d.K,
                0.0f, y.data(), d.N);
    benchmark::DoNotOptimize(y.data());
    benchmark::ClobberMemory();
  }
  set_flops(state, d.gemm_flops());
}

void BM_sgemm_linear_forward_backward(benchmark::State& state) {
  const Dims d(state);
  std::vector<float> x = buffer_of(random_matrix(d.M, d.K, 1)), w = buffer_of(random_matrix(d.N, d.K, 2));
  std::vector<float> dy = buffer_of(random_matrix(d.M, d.N, 3));
  std::vector<float> y(d.M * d.N), dx(d.M * d.K), dw(d.N * d.K);
  for (auto _ : state) {
    // y (M, N) = x (M, K) · Wᵀ (K, N)
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, d.M, d.N, d.K, 1.0f, x.data(), d.K, w.data(), d.K,
                0.0f, y.data(), d.N);
    // dx (M, K) = dy (M, N) · W (N, K)
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, d.M, d.K, d.N, 1.0f, dy.data(), d.N, w.data(), d.K,
                0.0f, dx.data(), d.K);
    // dW (N, K) = dyᵀ (N, M) · x (M, K)
    cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, d.N, d.K, d.M, 1.0f, dy.data(), d.N, x.data(), d.K,
                0.0f, dw.data(), d.K);
    benchmark::DoNotOptimize(y.data());
    benchmark::DoNotOptimize(dx.data());
    benchmark::DoNotOptimize(dw.data());
    benchmark::ClobberMemory();
  }
  set_flops(state, 3 * d.gemm_flops());
}

void BM_tapegrad_linear_forward_backward(benchmark::State& state) {
  const Dims d(state);
  Tensor x = random_matrix(d.M, d.K, 1).requires_grad_(), w = random_matrix(d.N, d.K, 2).requires_grad_();
  const Tensor dy = random_matrix(d.M, d.N, 3);
  for (auto _ : state) {
    x.reset_grad();
    w.reset_grad();
    Tensor y = linear(x, w);
    y.backward(dy);
    benchmark::DoNotOptimize(x.grad().raw_data());
    benchmark::DoNotOptimize(w.grad().raw_data());
  }
  set_flops(state, 3 * d.gemm_flops());
}

// {M, K, N}: a square product, then a GPT-2-small MLP up-projection (C = 768 -> 4·C) and an
// attention projection (C -> C) over B·T = 2048 rows.
void shapes(benchmark::internal::Benchmark* b) {
  b->Args({1024, 1024, 1024})->Args({2048, 768, 3072})->Args({2048, 768, 768});
  // Rates use wall-clock time (BLAS runs threads); the CPU column sums all the process's threads.
  b->ArgNames({"M", "K", "N"})->Unit(benchmark::kMillisecond)->UseRealTime()->MeasureProcessCPUTime();
}

BENCHMARK(BM_sgemm_forward)->Apply(shapes);
BENCHMARK(BM_tapegrad_matmul_forward)->Apply(shapes);
BENCHMARK(BM_sgemm_forward_backward)->Apply(shapes);
BENCHMARK(BM_tapegrad_matmul_forward_backward)->Apply(shapes);
BENCHMARK(BM_sgemm_linear_forward)->Apply(shapes);
BENCHMARK(BM_sgemm_linear_forward_backward)->Apply(shapes);
BENCHMARK(BM_tapegrad_linear_forward_backward)->Apply(shapes);

// Removes --threads=N from argv (Google Benchmark rejects flags it does not know) and
// returns N, or 0 when absent.
int take_threads_flag(int& argc, char** argv) {
  int threads = 0, kept = 1;
  for (int i = 1; i < argc; ++i) {
    if (std::strncmp(argv[i], "--threads=", 10) == 0)
      threads = std::atoi(argv[i] + 10);
    else
      argv[kept++] = argv[i];
  }
  argc = kept;
  return threads;
}

}  // namespace

int main(int argc, char** argv) {
  // --threads wins over TAPEGRAD_NUM_THREADS, which get_num_threads() applies on first call;
  // one setting drives both OpenBLAS (raw and tapegrad gemms alike) and OpenMP.
  const int threads = take_threads_flag(argc, argv);
  if (threads > 0) set_num_threads(threads);
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  check_blas_core_once();  // the warning about generic kernels, before any timing
  const char* coretype = std::getenv("OPENBLAS_CORETYPE");
  benchmark::AddCustomContext("blas_core", blas_core_name());
  benchmark::AddCustomContext("OPENBLAS_CORETYPE", coretype ? coretype : "(unset)");
  benchmark::AddCustomContext("threads", std::to_string(get_num_threads()));
  benchmark::AddCustomContext("openblas_threads", std::to_string(openblas_get_num_threads()));
  benchmark::AddCustomContext("openblas_config", openblas_get_config());
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
