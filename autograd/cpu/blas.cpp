// blas.cpp — wraps cblas_sgemm / cblas_dgemm and OpenBLAS's thread and core queries, and, when
// built with TAPEGRAD_WITH_DNNL, oneDNN's dnnl_sgemm for the float shapes where it is faster.
// cblas.h (and dnnl.h) are included here and nowhere else.
#include "blas.hpp"
#include "denormals.hpp"

#include <cblas.h>
#include <omp.h>

#if TAPEGRAD_HAS_DNNL
#include <oneapi/dnnl/dnnl.h>
#endif

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <type_traits>

#include "../env_switch.hpp"
#include "../errors.hpp"
#include "../profiler.hpp"
#include "blocked_sgemm.hpp"
#include "gemm_census.hpp"
#include "parallel.hpp"

namespace tapegrad {

namespace blas {

namespace {

// OpenBLAS's AVX-512 kernel families (SkylakeX, Cooperlake, SapphireRapids) rank differently from
// the others against gemv and against oneDNN (below, and auto_picks_dnnl).
bool openblas_runs_avx512_kernels() {
  static const bool avx512 = [] {
    const std::string core = blas_core_name();
    return core == "SkylakeX" || core == "Cooperlake" || core == "SapphireRapids";
  }();
  return avx512;
}

// A product with one row or one column is a matrix-vector product: one token's projections
// while generating (M = 1), or its attention over the cached keys. gemv reads the matrix once;
// OpenBLAS 0.3.21's gemm would first copy it into packed panels (a second pass over the
// weights, which is most of the work at M = 1). Returns false for other shapes.
//   M = 1:  c (1, N) = a (1, K) · op(B) (K, N)  =  op(B)ᵀ · a
//   N = 1:  c (M, 1) = op(A) (M, K) · b (K, 1)
// A row of a transposed operand is a column of its storage: stride ld instead of 1.
// Except on the AVX-512 kernel families (SkylakeX, Cooperlake, SapphireRapids): their gemm has a
// small-matrix path without packing, and there gemv was the slower one (bench/generate, one
// token at d_model 256 on an AVX-512 AMD EPYC: 1281–1878 tokens/s through gemm against
// 939–1332 through gemv with SkylakeX kernels; with Haswell kernels gemv was 2.3–2.6x faster).
bool gemm_packs_one_row() { return !openblas_runs_avx512_kernels(); }

bool runs_as_gemv(std::int64_t M, std::int64_t N, std::int64_t K) {
  return K != 0 && (M == 1 || N == 1) && gemm_packs_one_row();
}

template <typename T, typename Gemv>
bool as_gemv(Gemv gemv, bool trans_a, bool trans_b, std::int64_t M, std::int64_t N, std::int64_t K, T alpha,
             const T* A, std::int64_t lda, const T* B, std::int64_t ldb, T beta, T* C, std::int64_t ldc) {
  if (!runs_as_gemv(M, N, K)) return false;
  // beta = 0 must overwrite whatever C holds, NaN included: gemv scales y by beta first.
  if (beta == T(0))
    for (std::int64_t i = 0; i < (M == 1 ? N : M); ++i) C[M == 1 ? i : i * ldc] = T(0);
  const auto i = [](std::int64_t v) { return static_cast<int>(v); };
  if (M == 1) {  // B stored (K, N) without trans_b, (N, K) with it
    gemv(CblasRowMajor, trans_b ? CblasNoTrans : CblasTrans, i(trans_b ? N : K), i(trans_b ? K : N), alpha, B,
         i(ldb), A, i(trans_a ? lda : 1), beta, C, 1);
  } else {  // A stored (M, K) without trans_a, (K, M) with it
    gemv(CblasRowMajor, trans_a ? CblasTrans : CblasNoTrans, i(trans_a ? K : M), i(trans_a ? M : K), alpha, A,
         i(lda), B, i(trans_b ? 1 : ldb), beta, C, i(ldc));
  }
  return true;
}

// ---- two threads: a band of C's rows for each
//
// OpenBLAS runs one product on all its threads: they share the packed panels of B (each packs a
// part) and wait for each other at every panel. At two threads, a product whose C has at least
// as many rows as columns ran faster here as one single-thread OpenBLAS call per thread, each on
// its own band of C's rows, side by side in one parallel region (OpenBLAS runs one thread when
// called inside one): each thread packs the whole of B, the smaller operand there, and waits
// for no one. On 2 vCPUs of an AMD EPYC with SkylakeX kernels (`train_step --threads 2 --floor`,
// each shape timed alone, TAPEGRAD_GEMM_ROW_BANDS=0 then 1; bench/README.md, "Two threads: a
// band of rows each"), GFLOP/s, OpenBLAS's threads -> bands:
//   NN 512x128x512 (S)   246-260 -> 390-404    NN 2048x384x1536 (M)   329-377 -> 404-420
//   NN 512x128x128 (S)   189-218 -> 370-382    TN 3072x768x256 (G)    360-363 -> 416-423
// S's step 15.1-17.5 -> 12.6-14.6 ms, G's products 571-591 -> 551-554 ms a step. With fewer
// rows than columns, bands ran slower in a scratch program (NT 256x2304x768, G's qkv
// projection: 366 -> 350; NT 64x512x512: 230 -> 193), so OpenBLAS splits those itself, as it
// does every product under 2^20 multiply-adds (NN 128x64x64: 224 there, 191 in bands).
// Two threads only: with more, each band is thinner and every thread still packs all of B,
// which was not measured here (2 vCPUs), so OpenBLAS keeps its own split there.
// The bits: with SkylakeX kernels an element of C came out the same whichever thread computed
// it (the products of S, M and G that take bands, and 7 in double, against OpenBLAS's two
// threads and its one; 3 training steps of S, M, G and L at 2 threads gave the same losses and
// parameters). With Haswell kernels the last bits of a product depend on how it is split, so
// 2-thread results there differ from before (neither split gives one thread's bits); a thread
// count may change the last bits anyway (docs/performance.md, "Determinism").
// TAPEGRAD_GEMM_ROW_BANDS=0 turns the bands off.
constexpr int kBandThreads = 2;
constexpr double kBandsFromMultiplyAdds = 1 << 20;
constexpr std::int64_t kBandRowMultiple = 16;  // a band starts on a multiple of the kernels' row blocks

// TAPEGRAD_GEMM_ROW_BANDS: unset or 1 on, 0 off, anything else a ValueError naming it (read once,
// at the first product that could take bands; a bad value throws at every such product).
bool row_bands_enabled() {
  static const bool enabled = detail::env_switch("TAPEGRAD_GEMM_ROW_BANDS", true, "two-thread products in bands of rows");
  return enabled;
}

// Runs product(rows, a, c) for each thread's band of C's rows, where a is op(A)'s first row of
// the band (a row of A, or a column of its storage when trans_a) and c is C's; false, running
// nothing, when the product is left to OpenBLAS's threads (not two threads, inside a parallel
// region, fewer rows than columns, too small, or the bands turned off).
template <typename T, typename Product>
bool in_row_bands(Product product, bool trans_a, std::int64_t M, std::int64_t N, std::int64_t K, const T* A,
                  std::int64_t lda, T* C, std::int64_t ldc) {
  const int threads = omp_get_max_threads();
  if (threads != kBandThreads || omp_in_parallel() || M < N || M < kBandRowMultiple * threads ||
      static_cast<double>(M) * static_cast<double>(N) * static_cast<double>(K) < kBandsFromMultiplyAdds ||
      !row_bands_enabled())
    return false;
#pragma omp parallel num_threads(threads)
  {
    const std::int64_t t = omp_get_thread_num(), n = omp_get_num_threads();
    const std::int64_t begin = M * t / n / kBandRowMultiple * kBandRowMultiple;
    const std::int64_t end = t + 1 == n ? M : M * (t + 1) / n / kBandRowMultiple * kBandRowMultiple;
    if (end > begin) product(end - begin, trans_a ? A + begin : A + begin * lda, C + begin * ldc);
  }
  return true;
}

// The product on OpenBLAS (cblas_sgemm or cblas_dgemm), in bands of rows where they pay.
template <typename T, typename CblasGemm>
void on_openblas(CblasGemm cblas_gemm, bool trans_a, bool trans_b, std::int64_t M, std::int64_t N, std::int64_t K,
                 T alpha, const T* A, std::int64_t lda, const T* B, std::int64_t ldb, T beta, T* C, std::int64_t ldc) {
  const auto product = [&](std::int64_t rows, const T* a, T* c) {
    cblas_gemm(CblasRowMajor, trans_a ? CblasTrans : CblasNoTrans, trans_b ? CblasTrans : CblasNoTrans,
               static_cast<int>(rows), static_cast<int>(N), static_cast<int>(K), alpha, a, static_cast<int>(lda), B,
               static_cast<int>(ldb), beta, c, static_cast<int>(ldc));
  };
  if (!in_row_bands(product, trans_a, M, N, K, A, lda, C, ldc)) product(M, A, C);
}

// ---- the GEMM library per product (GemmBackend, blas.hpp)

// Whether tapegrad's own kernel runs this float product (its rule: blocked_sgemm.cpp). A product
// that runs as gemv never reaches it.
bool runs_on_own_kernel(GemmBackend backend, bool trans_a, bool trans_b, std::int64_t M, std::int64_t N,
                        std::int64_t K, float alpha, float beta) {
  return backend == GemmBackend::tapegrad && !runs_as_gemv(M, N, K) &&
         detail::blocked_sgemm_takes(trans_a, trans_b, M, N, K, alpha, beta);
}

std::atomic<int> chosen_backend{-1};  // a GemmBackend, or -1 before the first product
std::mutex choosing;

#if TAPEGRAD_HAS_DNNL
constexpr bool has_dnnl = true;

// oneDNN's sgemm, row-major like the cblas call it replaces. Debian's libdnnl (2.6) is built
// with OpenMP and links the same libgomp as tapegrad and OpenBLAS: its parallel regions take
// omp_get_max_threads() threads, the count set_num_threads() sets, and one thread when called
// inside a parallel region (attention's per-head products; nesting is off), so it adds no threads.
// Checked: at set_num_threads(2) the process keeps 2 OS threads, in and out of a parallel loop,
// and 30 products of 1024^3 took 17 and 17 ticks of CPU time on them (31 and 0 at 1 thread).
void dnnl_gemm(bool trans_a, bool trans_b, std::int64_t M, std::int64_t N, std::int64_t K, float alpha,
               const float* A, std::int64_t lda, const float* B, std::int64_t ldb, float beta, float* C,
               std::int64_t ldc) {
  const dnnl_status_t status =
      dnnl_sgemm(trans_a ? 'T' : 'N', trans_b ? 'T' : 'N', M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
  if (status != dnnl_success)
    throw Error("blas::gemm: dnnl_sgemm failed with status " + std::to_string(int(status)) + " on " +
                std::string(trans_a ? "T" : "N") + (trans_b ? "T " : "N ") + std::to_string(M) + "x" +
                std::to_string(N) + "x" + std::to_string(K));
}

bool runs_on_dnnl(GemmBackend backend, bool trans_a, bool trans_b, std::int64_t M, std::int64_t N, std::int64_t K) {
  if (M == 0 || N == 0 || K == 0) return false;  // nothing to multiply: OpenBLAS scales C by beta
  switch (backend) {
    case GemmBackend::openblas: return false;
    case GemmBackend::dnnl: return true;
    case GemmBackend::automatic: return auto_picks_dnnl(auto_rule(), trans_a, trans_b, M, N, K);
    case GemmBackend::tapegrad: return false;
  }
  return false;
}
#else
constexpr bool has_dnnl = false;
#endif

}  // namespace

AutoRule auto_rule() { return openblas_runs_avx512_kernels() ? AutoRule::avx512 : AutoRule::avx2; }

// GemmBackend::automatic's two rules, each measured by bench/bench_gemm_backends on the 62 float
// products of S, M, G and L (1 thread, medians of interleaved rounds; bench/README.md).
//
// avx512 (SkylakeX kernels, an AVX-512 AMD EPYC): oneDNN for every product but the small ones, an
// output of at most 64x64 with K below 256 (attention's per-head products at short T). oneDNN ran
// 50 of the 52 larger products 1.01-1.34x as fast as OpenBLAS, median 1.08x (NT 2048x1536x384 213
// against 190 GFLOP/s, NN 256x768x3072 202 against 151); OpenBLAS's small-matrix kernels won all
// 10 small ones, oneDNN reaching 0.75-0.93x (NN 64x64x64 178 against 215). The transposes did not
// change the winner. The training step ran 6-8% faster than on OpenBLAS alone.
//
// avx2 (Haswell kernels, a Zen 3 EPYC without AVX-512; two runs, of 3 and 5 rounds, from which the
// rule was read, so the whole step is its check: bench/README.md). There the ranking differs.
// oneDNN won the small products (1.06-1.26x: no small-matrix kernels in OpenBLAS's Haswell
// family) and the 2048-token products of M and L (NT 2048x384x384 1.18x, NN 2048x1536x384
// 1.06-1.18x), but lost two classes badly:
//   - a short, wide product (M ≤ 256 rows, N ≥ 768 columns), the forward and input gradients of
//     G at 256 tokens: NN 256x3072x768 0.48-0.52x, NT 256x50257x768 0.78-0.82x;
//   - a weight gradient (TN: Σ over K rows of tokens) over more than 256 rows into a small
//     output: TN 512x128x512 0.70-0.75x, TN 384x384x2048 0.88-0.93x; into a large one (M·N at
//     least 640², TN 1152x384x2048 1.05-1.08x) oneDNN held its own, and over at most 256 rows
//     it won (TN 2304x768x256 1.21x).
// At those rates the AVX-512 rule would make S's GEMMs 6-9% and G's 11-15% slower than
// OpenBLAS's; this rule makes S's 1-4%, M's 7%, G's 2-4% and L's 8-9% faster, within 0.3% of the
// better library per shape for M, G and L (S 0.5-2%). The whole training step, 5 interleaved
// rounds (L 2): S 1.00x, M 0.97x, G 0.98x, L 0.89x of OpenBLAS's time, where the AVX-512 rule
// took 1.12x, 0.94x, 1.09x and 0.98x.
bool auto_picks_dnnl(AutoRule rule, bool trans_a, [[maybe_unused]] bool trans_b, std::int64_t M, std::int64_t N,
                     std::int64_t K) {
  if (rule == AutoRule::avx512) return !(M * N <= 64 * 64 && K < 256);
  if (trans_a) return K <= 256 || M * N >= 640 * 640;
  return !(M <= 256 && N >= 768);
}

bool gemm_backend_available(GemmBackend backend) {
  if (backend == GemmBackend::tapegrad) return detail::blocked_sgemm_available();
  return backend == GemmBackend::openblas || has_dnnl;
}

const char* gemm_backend_name(GemmBackend backend) {
  switch (backend) {
    case GemmBackend::openblas: return "openblas";
    case GemmBackend::dnnl: return "dnnl";
    case GemmBackend::automatic: return "auto";
    case GemmBackend::tapegrad: return "tapegrad";
  }
  return "?";
}

GemmBackend parse_gemm_backend(const std::string& text) {
  for (GemmBackend b : {GemmBackend::openblas, GemmBackend::dnnl, GemmBackend::automatic, GemmBackend::tapegrad})
    if (text == gemm_backend_name(b)) return b;
  throw ValueError("GEMM backend '" + text + "': expected openblas, dnnl, auto or tapegrad");
}

namespace {
void require_available(GemmBackend backend, const std::string& who) {
  if (gemm_backend_available(backend)) return;
  if (backend == GemmBackend::tapegrad)
    throw ValueError(who + ": this tapegrad was built without AVX-512, which its own GEMM kernel needs; configure "
                           "with -DTAPEGRAD_NATIVE=ON on an AVX-512 CPU or use openblas");
  throw ValueError(who + ": this tapegrad was built without oneDNN; configure with -DTAPEGRAD_WITH_DNNL=ON "
                         "(Debian: libdnnl-dev) or use openblas");
}
}  // namespace

GemmBackend gemm_backend_from_env() {
  const char* env = std::getenv("TAPEGRAD_GEMM_BACKEND");
  if (!env) return has_dnnl ? GemmBackend::automatic : GemmBackend::openblas;
  const std::string who = std::string("TAPEGRAD_GEMM_BACKEND=") + env;
  GemmBackend backend;
  try {
    backend = parse_gemm_backend(env);
  } catch (const ValueError&) {
    throw ValueError(who + ": expected openblas, dnnl, auto or tapegrad");
  }
  require_available(backend, who);
  return backend;
}

void set_gemm_backend(GemmBackend backend) {
  require_available(backend, std::string("set_gemm_backend(") + gemm_backend_name(backend) + ")");
  std::lock_guard lock(choosing);
  chosen_backend.store(int(backend), std::memory_order_release);
}

GemmBackend gemm_backend() {
  int chosen = chosen_backend.load(std::memory_order_acquire);
  if (chosen >= 0) return GemmBackend(chosen);
  std::lock_guard lock(choosing);
  chosen = chosen_backend.load(std::memory_order_acquire);
  if (chosen < 0) {
    chosen = int(gemm_backend_from_env());  // throws on a bad value: every product then does
    chosen_backend.store(chosen, std::memory_order_release);
  }
  return GemmBackend(chosen);
}

// The transposes reach the rules of oneDNN (a build with it) and of tapegrad's kernel (which
// ignores them today).
GemmBackend gemm_backend_for([[maybe_unused]] bool trans_a, [[maybe_unused]] bool trans_b, std::int64_t M,
                             std::int64_t N, std::int64_t K) {
  const GemmBackend backend = gemm_backend();
  if (runs_as_gemv(M, N, K)) return GemmBackend::openblas;
  if (runs_on_own_kernel(backend, trans_a, trans_b, M, N, K, 1.0f, 0.0f)) return GemmBackend::tapegrad;
#if TAPEGRAD_HAS_DNNL
  if (runs_on_dnnl(backend, trans_a, trans_b, M, N, K)) return GemmBackend::dnnl;
#else
  (void)backend;
#endif
  return GemmBackend::openblas;
}

template <>
void gemm<float>(bool trans_a, bool trans_b, std::int64_t M, std::int64_t N, std::int64_t K,
                 float alpha, const float* A, std::int64_t lda, const float* B, std::int64_t ldb,
                 float beta, float* C, std::int64_t ldc) {
  const GemmBackend backend = gemm_backend();
  GemmCensusEntry census(DType::float32, trans_a, trans_b, M, N, K);
  profiler::GemmTimer timed;
  if (as_gemv(cblas_sgemv, trans_a, trans_b, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc)) return;
  if (runs_on_own_kernel(backend, trans_a, trans_b, M, N, K, alpha, beta)) {
    detail::blocked_sgemm(trans_a, trans_b, M, N, K, A, lda, B, ldb, nullptr, beta == 1.0f, C, ldc);
    return;
  }
#if TAPEGRAD_HAS_DNNL
  if (runs_on_dnnl(backend, trans_a, trans_b, M, N, K)) {
    dnnl_gemm(trans_a, trans_b, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
    return;
  }
#else
  (void)backend;  // no oneDNN in this build
#endif
  on_openblas(cblas_sgemm, trans_a, trans_b, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
}

template <>
void gemm<double>(bool trans_a, bool trans_b, std::int64_t M, std::int64_t N, std::int64_t K,
                  double alpha, const double* A, std::int64_t lda, const double* B,
                  std::int64_t ldb, double beta, double* C, std::int64_t ldc) {
  gemm_backend();  // reports a bad TAPEGRAD_GEMM_BACKEND here too; double always runs on OpenBLAS
  GemmCensusEntry census(DType::float64, trans_a, trans_b, M, N, K);
  profiler::GemmTimer timed;
  if (as_gemv(cblas_dgemv, trans_a, trans_b, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc)) return;
  on_openblas(cblas_dgemm, trans_a, trans_b, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
}

template <typename T>
void gemm_with_bias(bool trans_a, bool trans_b, std::int64_t M, std::int64_t N, std::int64_t K, const T* A,
                    std::int64_t lda, const T* B, std::int64_t ldb, const T* bias, T* C, std::int64_t ldc) {
  if constexpr (std::is_same_v<T, float>) {
    if (runs_on_own_kernel(gemm_backend(), trans_a, trans_b, M, N, K, 1.0f, 1.0f)) {
      GemmCensusEntry census(DType::float32, trans_a, trans_b, M, N, K);
      profiler::GemmTimer timed;
      detail::blocked_sgemm(trans_a, trans_b, M, N, K, A, lda, B, ldb, bias, false, C, ldc);
      return;
    }
  }
  // a pass over C at memory speed, shared by the threads (on one: 9 ms of M's 2-thread step)
  parallel_region_if(M * N > kParallelGrain, [&] {
#pragma omp for nowait
    for (std::int64_t r = 0; r < M; ++r) std::copy(bias, bias + N, C + r * ldc);
  });
  gemm<T>(trans_a, trans_b, M, N, K, T(1), A, lda, B, ldb, T(1), C, ldc);
}

template void gemm_with_bias<float>(bool, bool, std::int64_t, std::int64_t, std::int64_t, const float*, std::int64_t,
                                    const float*, std::int64_t, const float*, float*, std::int64_t);
template void gemm_with_bias<double>(bool, bool, std::int64_t, std::int64_t, std::int64_t, const double*,
                                     std::int64_t, const double*, std::int64_t, const double*, double*, std::int64_t);

}  // namespace blas

namespace {
bool is_generic_core(const std::string& core);
}

std::string blas_core_name() {
  const char* name = openblas_get_corename();
  return name ? name : "unknown";
}

void check_blas_core_once() {
  static std::once_flag once;
  std::call_once(once, [] {
    const std::string core = blas_core_name();
    const bool generic = is_generic_core(core);
    __builtin_cpu_init();
    const bool avx512 = __builtin_cpu_supports("avx512f");
    const bool avx2 = __builtin_cpu_supports("avx2");
    if (generic && (avx512 || avx2) && !std::getenv("TAPEGRAD_QUIET_BLAS"))
      std::fprintf(stderr,
                   "tapegrad: warning: OpenBLAS uses its generic '%s' kernels on a CPU with %s "
                   "(matmuls run several times slower). Set OPENBLAS_CORETYPE=%s in the "
                   "environment before starting the program (tapegrad does so itself unless "
                   "OPENBLAS_CORETYPE or TAPEGRAD_KEEP_BLAS_CORE is set).\n",
                   core.c_str(), avx512 ? "AVX-512" : "AVX2", avx512 ? "SkylakeX" : "Haswell");
  });
}

namespace {
// 0 (OpenMP's default) when unset, empty or 0. Read as the library loads, before main, where
// an exception could only abort: any other value that is not a thread count is ignored with a
// warning that names it, as libgomp does for OMP_NUM_THREADS (atoi made "4 threads" 4 and "abc"
// a silent default).
int thread_count_from_env() {
  const char* env = std::getenv("TAPEGRAD_NUM_THREADS");
  if (!env || !*env) return 0;
  char* end = nullptr;
  const long n = std::strtol(env, &end, 10);
  // A digit first: strtol itself skips leading white space (" 4", "\t4") and takes a sign.
  if (*end != '\0' || n > 4096 || !std::isdigit(static_cast<unsigned char>(env[0]))) {
    std::fprintf(stderr, "tapegrad: TAPEGRAD_NUM_THREADS=\"%s\" is not a thread count (a whole number from 1 to "
                         "4096, or 0 for the default); ignored, OpenMP's default applies\n", env);
    return 0;
  }
  return static_cast<int>(n);
}
}  // namespace

void set_num_threads(int n) {
  if (n <= 0) throw ValueError("set_num_threads: expected a positive count, got " + std::to_string(n));
  omp_set_num_threads(n);
  openblas_set_num_threads(n);
  if (flush_denormal()) set_flush_denormal(true);  // the threads a larger pool adds
}

int get_num_threads() { return omp_get_max_threads(); }

// OpenBLAS built with DYNAMIC_ARCH (Debian's) picks its kernels when it loads, through these
// two functions. Declared weak: a BLAS without them (a single-architecture build) links too.
extern "C" {
__attribute__((weak)) void gotoblas_dynamic_init(void);
__attribute__((weak)) void gotoblas_dynamic_quit(void);
}

namespace {

bool is_generic_core(const std::string& core) {
  return core == "Prescott" || core == "prescott" || core == "Core2" || core == "Nehalem" || core == "generic";
}

// OpenBLAS 0.3.21 does not recognise recent Xeons and falls back to its generic SSE3 kernels,
// 4-5x slower. OPENBLAS_CORETYPE fixes that but is read only when the library loads, i.e.
// before main(). So when the user has not set it and the kernels are generic on a CPU with
// AVX-512 (or AVX2), the kernel table is chosen again here, with the variable set, the way
// OpenBLAS does at load time. This runs while the program loads, before any BLAS call.
// TAPEGRAD_KEEP_BLAS_CORE=1 turns it off.
void choose_fast_blas_core() {
  if (std::getenv("OPENBLAS_CORETYPE") || std::getenv("TAPEGRAD_KEEP_BLAS_CORE")) return;
  if (!gotoblas_dynamic_init || !gotoblas_dynamic_quit || !is_generic_core(blas_core_name())) return;
  __builtin_cpu_init();
  const char* core = __builtin_cpu_supports("avx512f") ? "SkylakeX" : __builtin_cpu_supports("avx2") ? "Haswell" : nullptr;
  if (!core) return;
  setenv("OPENBLAS_CORETYPE", core, 0);
  gotoblas_dynamic_quit();
  gotoblas_dynamic_init();
}

// Both apply as soon as the library is loaded, before the first op runs.
const bool blas_configured = [] {
  choose_fast_blas_core();
  if (int n = thread_count_from_env()) set_num_threads(n);
  return true;
}();

}  // namespace

}  // namespace tapegrad
