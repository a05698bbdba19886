// test_blocked_sgemm.cpp — tapegrad's own float GEMM (autograd/cpu/blocked_sgemm.hpp) and
// GemmBackend::tapegrad: every transpose pair, tiles cut short in rows and columns, K cut into
// blocks with remainders, leading dimensions wider than the matrices, beta 0 over a C that holds
// NaN (overwritten) and accumulation, the bias added in the kernel; against a naive product, and
// bit for bit against OpenBLAS on its SkylakeX kernels (the kernel's claim); the rule of which
// products it takes; the backend's name, TAPEGRAD_GEMM_BACKEND, and its refusal in a build
// without AVX-512.
#include <catch2/catch.hpp>

#include <omp.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include <tapegrad/autograd/cpu/blas.hpp>
#include <tapegrad/autograd/cpu/blocked_sgemm.hpp>
#include <tapegrad/autograd/errors.hpp>

#include "support/blas_guards.hpp"
#include "support/naive_gemm.hpp"

using namespace tapegrad;
using blas::GemmBackend;
using tapegrad::testing::BackendEnvGuard;
using tapegrad::testing::BackendGuard;
using tapegrad::testing::GemmProblem;
using tapegrad::testing::ThreadCountGuard;

namespace {

// N values for a bias, none of them small against the products.
std::vector<float> bias_of(int N) {
  std::vector<float> bias(N);
  for (int j = 0; j < N; ++j) bias[j] = 0.5f + 0.25f * static_cast<float>(j % 7);
  return bias;
}

// The kernel called directly (any shape): C = op(A)·op(B) [+ bias] [+ C when beta is 1].
std::vector<float> by_kernel(const GemmProblem<float>& p, const float* bias) {
  std::vector<float> C = p.C0;
  detail::blocked_sgemm(p.ta, p.tb, p.M, p.N, p.K, p.A.data(), p.lda(), p.B.data(), p.ldb(), bias, p.beta == 1.0f,
                        C.data(), p.ldc());
  return C;
}

// Counts the elements off by more than float tolerance, and padding between rows written.
void check_against_naive(const GemmProblem<float>& p, const std::vector<float>& C, const float* bias) {
  std::vector<float> expected = p.reference();
  const int ldc = p.ldc();
  int wrong = 0, padding_written = 0;
  for (int i = 0; i < p.M; ++i) {
    for (int j = 0; j < p.N; ++j) {
      const double want = double(expected[i * ldc + j]) + (bias ? double(bias[j]) : 0.0);
      const double got = C[i * ldc + j];
      // K up to 1000 terms of size up to 1: float rounding stays well below 1e-3 relative
      if (!(std::abs(got - want) <= 2e-4 * (std::sqrt(double(p.K)) + std::abs(want)))) ++wrong;
    }
    for (int j = p.N; j < ldc; ++j)
      if (!(std::isnan(C[i * ldc + j]) || C[i * ldc + j] == p.C0[i * ldc + j])) ++padding_written;
  }
  INFO(p.str() << (bias ? ", with a bias" : ""));
  CHECK(wrong == 0);
  CHECK(padding_written == 0);
}

bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

}  // namespace

TEST_CASE("blocked_sgemm equals the naive product: tiles cut short, K in blocks, beta 0 and 1, a bias", "[blas]") {
  if (!detail::blocked_sgemm_available()) {
    BackendGuard guard;
    CHECK_THROWS_WITH(blas::set_gemm_backend(GemmBackend::tapegrad), Catch::Contains("built without AVX-512"));
    return;
  }
  // rows: one, short of a 12-row tile, one over; columns: short of a 16-float half, one over 32,
  // over the 512-column block; K: under one step, one block, 449 (two halves), 1000 (448 + two)
  struct Shape {
    int M, N, K;
  };
  for (const Shape s : {Shape{1, 1, 1}, Shape{5, 7, 3}, Shape{12, 32, 16}, Shape{13, 33, 17}, Shape{25, 100, 449},
                        Shape{37, 530, 1000}, Shape{100, 64, 900}})
    for (const bool ta : {false, true})
      for (const bool tb : {false, true})
        for (const float beta : {0.0f, 1.0f}) {
          const GemmProblem<float> p(ta, tb, s.M, s.N, s.K, 1.0f, beta, 3);
          check_against_naive(p, by_kernel(p, nullptr), nullptr);
          if (beta == 0.0f) {
            const std::vector<float> bias = bias_of(s.N);
            check_against_naive(p, by_kernel(p, bias.data()), bias.data());
          }
        }
}

TEST_CASE("GemmBackend::tapegrad gives OpenBLAS's bits on its SkylakeX kernels", "[blas]") {
  if (!detail::blocked_sgemm_available()) return;  // the case above checks the refusal
  if (blas_core_name() != "SkylakeX") {
    WARN("OpenBLAS runs its " << blas_core_name() << " kernels here: the bitwise claim is for SkylakeX's");
    return;
  }
  BackendGuard guard;
  ThreadCountGuard threads;
  set_num_threads(1);
  struct Shape {
    int M, N, K;
  };
  // S's products, K cut as OpenBLAS cuts it (512: 256 + 256; 1000: 448 + 276 + 276 rounded to
  // 288 + 264), and shapes no tile fits
  for (const Shape s : {Shape{512, 128, 512}, Shape{128, 512, 512}, Shape{512, 512, 128}, Shape{300, 200, 1000},
                        Shape{97, 65, 640}, Shape{61, 250, 449}})
    for (const bool ta : {false, true})
      for (const bool tb : {false, true})
        for (const float beta : {0.0f, 1.0f}) {
          const GemmProblem<float> p(ta, tb, s.M, s.N, s.K, 1.0f, beta, 3);
          std::vector<std::vector<float>> C;
          for (const GemmBackend b : {GemmBackend::openblas, GemmBackend::tapegrad}) {
            blas::set_gemm_backend(b);
            C.push_back(p.C0);
            blas::gemm<float>(ta, tb, s.M, s.N, s.K, 1.0f, p.A.data(), p.lda(), p.B.data(), p.ldb(), beta,
                              C.back().data(), p.ldc());
          }
          INFO(p.str() << ": runs on " << blas::gemm_backend_name(blas::gemm_backend_for(ta, tb, s.M, s.N, s.K)));
          CHECK(blas::gemm_backend_for(ta, tb, s.M, s.N, s.K) == GemmBackend::tapegrad);
          CHECK(same_bits(C[0], C[1]));
          if (beta == 0.0f) {  // the bias from the kernel's registers, against copied rows and beta 1
            const std::vector<float> bias = bias_of(s.N);
            std::vector<std::vector<float>> with_bias;
            for (const GemmBackend b : {GemmBackend::openblas, GemmBackend::tapegrad}) {
              blas::set_gemm_backend(b);
              with_bias.push_back(p.C0);
              blas::gemm_with_bias<float>(ta, tb, s.M, s.N, s.K, p.A.data(), p.lda(), p.B.data(), p.ldb(),
                                          bias.data(), with_bias.back().data(), p.ldc());
            }
            CHECK(same_bits(with_bias[0], with_bias[1]));
            check_against_naive(p, with_bias[1], bias.data());
          }
        }
}

TEST_CASE("blocked_sgemm_takes one-thread products of alpha 1 and beta 0 or 1, over 100^3 and up to 2^26 "
          "multiply-adds (and more with one block of K on AMD, below)", "[blas]") {
  if (!detail::blocked_sgemm_available()) {
    CHECK_FALSE(detail::blocked_sgemm_takes(false, false, 512, 128, 512, 1.0f, 0.0f));
    return;
  }
  ThreadCountGuard threads;
  set_num_threads(1);
  for (const bool ta : {false, true})
    for (const bool tb : {false, true}) {
      CHECK(detail::blocked_sgemm_takes(ta, tb, 512, 128, 512, 1.0f, 0.0f));  // S's
      CHECK(detail::blocked_sgemm_takes(ta, tb, 512, 128, 512, 1.0f, 1.0f));
      CHECK(detail::blocked_sgemm_takes(ta, tb, 101, 100, 100, 1.0f, 0.0f));
      CHECK(detail::blocked_sgemm_takes(ta, tb, 512, 256, 512, 1.0f, 0.0f));   // 2^26
      CHECK_FALSE(detail::blocked_sgemm_takes(ta, tb, 100, 100, 100, 1.0f, 0.0f));   // OpenBLAS's small kernels
      CHECK_FALSE(detail::blocked_sgemm_takes(ta, tb, 513, 256, 512, 1.0f, 0.0f));   // over 2^26
      CHECK_FALSE(detail::blocked_sgemm_takes(ta, tb, 2048, 384, 448 + 16, 1.0f, 0.0f));  // two blocks of K
      CHECK_FALSE(detail::blocked_sgemm_takes(ta, tb, 512, 128, 512, 2.0f, 0.0f));   // alpha
      CHECK_FALSE(detail::blocked_sgemm_takes(ta, tb, 512, 128, 512, 1.0f, 0.5f));   // beta
      CHECK_FALSE(detail::blocked_sgemm_takes(ta, tb, 0, 128, 512, 1.0f, 0.0f));
    }
  set_num_threads(2);  // OpenBLAS's threads, or tapegrad's bands of rows (blas.cpp)
  CHECK_FALSE(detail::blocked_sgemm_takes(false, false, 512, 128, 512, 1.0f, 0.0f));
  bool inside = false;
#pragma omp parallel num_threads(2)
  {
#pragma omp single
    inside = detail::blocked_sgemm_takes(false, false, 512, 128, 512, 1.0f, 0.0f);  // one thread each there
  }
  CHECK(inside);
}

TEST_CASE("GemmBackend::tapegrad: its name, TAPEGRAD_GEMM_BACKEND, and the library per product", "[blas]") {
  CHECK(blas::parse_gemm_backend("tapegrad") == GemmBackend::tapegrad);
  CHECK(std::string(blas::gemm_backend_name(GemmBackend::tapegrad)) == "tapegrad");
  CHECK_THROWS_WITH(blas::parse_gemm_backend("own"), Catch::Contains("openblas, dnnl, auto or tapegrad"));
  CHECK(blas::gemm_backend_available(GemmBackend::tapegrad) == detail::blocked_sgemm_available());
  BackendEnvGuard env("tapegrad");
  if (!detail::blocked_sgemm_available()) {
    CHECK_THROWS_WITH(blas::gemm_backend_from_env(),
                      Catch::Contains("TAPEGRAD_GEMM_BACKEND=tapegrad") && Catch::Contains("without AVX-512"));
    return;
  }
  CHECK(blas::gemm_backend_from_env() == GemmBackend::tapegrad);
  BackendGuard guard;
  ThreadCountGuard threads;
  set_num_threads(1);
  blas::set_gemm_backend(GemmBackend::tapegrad);
  CHECK(blas::gemm_backend_for(false, true, 512, 128, 512) == GemmBackend::tapegrad);
  CHECK(blas::gemm_backend_for(false, false, 64, 64, 64) == GemmBackend::openblas);        // small
  CHECK(blas::gemm_backend_for(false, false, 2048, 384, 1536) == GemmBackend::openblas);   // large
  set_num_threads(2);
  CHECK(blas::gemm_backend_for(false, true, 512, 128, 512) == GemmBackend::openblas);
}

namespace {
bool on_amd_cpu() {
  __builtin_cpu_init();
  return __builtin_cpu_is("amd");
}
}  // namespace

TEST_CASE("On an AMD CPU, GemmBackend::tapegrad takes NN and NT products over 2^26 multiply-adds with one block "
          "of K, with OpenBLAS's bits, and elsewhere leaves them to OpenBLAS", "[blas]") {
  if (!detail::blocked_sgemm_available()) return;
  ThreadCountGuard threads;
  set_num_threads(1);
  const bool amd = on_amd_cpu();
  for (const bool tb : {false, true}) {
    CHECK(detail::blocked_sgemm_takes(false, tb, 2048, 1536, 384, 1.0f, 0.0f) == amd);  // M's fc1, dh
    CHECK(detail::blocked_sgemm_takes(false, tb, 2048, 384, 448, 1.0f, 1.0f) == amd);
    CHECK_FALSE(detail::blocked_sgemm_takes(false, tb, 2048, 384, 449, 1.0f, 0.0f));  // two blocks of K
    CHECK_FALSE(detail::blocked_sgemm_takes(true, tb, 2048, 384, 384, 1.0f, 0.0f));   // TN, TT: A read across
  }
  set_num_threads(2);
  CHECK_FALSE(detail::blocked_sgemm_takes(false, true, 2048, 1536, 384, 1.0f, 0.0f));
  set_num_threads(1);
  if (!amd || blas_core_name() != "SkylakeX") return;
  // 700 x 300 x 384: 80.6 million multiply-adds, over 2^26 (67.1 million), one block of K
  BackendGuard guard;
  for (const bool tb : {false, true})
    for (const float beta : {0.0f, 1.0f}) {
      const GemmProblem<float> p(false, tb, 700, 300, 384, 1.0f, beta, 3);
      std::vector<std::vector<float>> C, with_bias;
      const std::vector<float> bias = bias_of(p.N);
      for (const GemmBackend b : {GemmBackend::openblas, GemmBackend::tapegrad}) {
        blas::set_gemm_backend(b);
        C.push_back(p.C0);
        blas::gemm<float>(p.ta, p.tb, p.M, p.N, p.K, 1.0f, p.A.data(), p.lda(), p.B.data(), p.ldb(), beta,
                          C.back().data(), p.ldc());
        with_bias.push_back(p.C0);
        blas::gemm_with_bias<float>(p.ta, p.tb, p.M, p.N, p.K, p.A.data(), p.lda(), p.B.data(), p.ldb(),
                                    bias.data(), with_bias.back().data(), p.ldc());
      }
      INFO(p.str());
      CHECK(blas::gemm_backend_for(p.ta, p.tb, p.M, p.N, p.K) == GemmBackend::tapegrad);
      CHECK(same_bits(C[0], C[1]));
      CHECK(same_bits(with_bias[0], with_bias[1]));
    }
}
