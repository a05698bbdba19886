// test_blas_dnnl.cpp — blas::gemm<float> on oneDNN (GemmBackend::dnnl, built with
// TAPEGRAD_WITH_DNNL; tests/CMakeLists.txt leaves this file out otherwise): every transpose
// pair, leading dimensions wider than the matrices, alpha, beta 0 over a C that holds NaN (it
// must be overwritten) and beta 1 (accumulate), against a naive product and against OpenBLAS;
// the rule of GemmBackend::automatic; the selector and TAPEGRAD_GEMM_BACKEND's errors.
#include <catch2/catch.hpp>
#include <omp.h>

#include <cmath>
#include <cstdlib>
#include <string>
#include <vector>

#include <tapegrad/autograd/cpu/blas.hpp>

#include "support/blas_guards.hpp"
#include "support/naive_gemm.hpp"
#include <tapegrad/autograd/errors.hpp>

using namespace tapegrad;
using blas::GemmBackend;
using tapegrad::testing::BackendEnvGuard;
using tapegrad::testing::BackendGuard;

namespace {

using Problem = tapegrad::testing::GemmProblem<float>;

// C after blas::gemm on `backend`.
std::vector<float> run(const Problem& p, GemmBackend backend) {
  blas::set_gemm_backend(backend);
  std::vector<float> C = p.C0;
  blas::gemm<float>(p.ta, p.tb, p.M, p.N, p.K, p.alpha, p.A.data(), p.lda(), p.B.data(), p.ldb(), p.beta, C.data(),
                    p.ldc());
  return C;
}

// Every element within float tolerance of `expected`; the padding between rows untouched.
void check_close(const Problem& p, const std::vector<float>& C, const std::vector<float>& expected, const char* what) {
  const int ldc = p.ldc();
  int bad = 0;
  for (int i = 0; i < p.M; ++i)
    for (int j = 0; j < p.N; ++j) {
      const double c = C[i * ldc + j], e = expected[i * ldc + j];
      if (!(std::abs(c - e) <= 1e-4 * (1 + std::abs(e))) && bad++ < 3) {
        INFO(what << ": " << p.str() << ", element (" << i << ", " << j << "): " << c << " against " << e);
        CHECK(false);
      }
      for (int j2 = p.N; j2 < ldc && j == 0; ++j2) {  // the padding of row i
        const float pc = C[i * ldc + j2], p0 = p.C0[i * ldc + j2];
        CHECK(((std::isnan(pc) && std::isnan(p0)) || pc == p0));
      }
    }
  INFO(what << ": " << p.str());
  CHECK(bad == 0);
}

}  // namespace

TEST_CASE("blas: oneDNN is built in, every GEMM backend is available", "[blas]") {
  CHECK(blas::gemm_backend_available(GemmBackend::openblas));
  CHECK(blas::gemm_backend_available(GemmBackend::dnnl));
  CHECK(blas::gemm_backend_available(GemmBackend::automatic));
}

TEST_CASE("blas::gemm<float> on oneDNN equals the naive product and OpenBLAS's", "[blas]") {
  BackendGuard restore;
  for (bool ta : {false, true})
    for (bool tb : {false, true})
      // automatic under the AVX-512 rule runs the first three on OpenBLAS, the last two on oneDNN
      // (M·N > 64·64, K ≥ 256); under the AVX2 rule all five on oneDNN
      for (auto [M, N, K] : {std::tuple{37, 29, 19}, std::tuple{64, 64, 64}, std::tuple{2, 3, 1}, std::tuple{70, 65, 40},
                             std::tuple{5, 9, 300}})
        for (float beta : {0.0f, 1.0f, -0.5f}) {
          const Problem p(ta, tb, M, N, K, 1.5f, beta);
          const std::vector<float> expected = p.reference();
          const std::vector<float> dnnl = run(p, GemmBackend::dnnl), openblas = run(p, GemmBackend::openblas);
          check_close(p, dnnl, expected, "oneDNN against the naive product");
          check_close(p, dnnl, openblas, "oneDNN against OpenBLAS");
          check_close(p, run(p, GemmBackend::automatic), expected, "automatic against the naive product");
        }
}

TEST_CASE("blas::gemm<float> on oneDNN inside an OpenMP loop (attention's per-head products)", "[blas]") {
  BackendGuard restore;
  blas::set_gemm_backend(GemmBackend::dnnl);
  const Problem p(false, true, 48, 40, 32, 1.0f, 0.0f);
  const std::vector<float> expected = p.reference();
  std::vector<std::vector<float>> C(8, p.C0);
#pragma omp parallel for
  for (int h = 0; h < 8; ++h)
    blas::gemm<float>(p.ta, p.tb, p.M, p.N, p.K, p.alpha, p.A.data(), p.lda(), p.B.data(), p.ldb(), p.beta,
                      C[std::size_t(h)].data(), p.ldc());
  for (const auto& c : C) check_close(p, c, expected, "oneDNN in a parallel loop");
}

TEST_CASE("blas::gemm_backend_for names the library that runs a product", "[blas]") {
  BackendGuard restore;
  blas::set_gemm_backend(GemmBackend::openblas);
  CHECK(blas::gemm_backend() == GemmBackend::openblas);
  CHECK(blas::gemm_backend_for(false, true, 512, 128, 512) == GemmBackend::openblas);
  blas::set_gemm_backend(GemmBackend::dnnl);
  CHECK(blas::gemm_backend() == GemmBackend::dnnl);
  CHECK(blas::gemm_backend_for(false, true, 512, 128, 512) == GemmBackend::dnnl);
  CHECK(blas::gemm_backend_for(false, false, 0, 128, 512) == GemmBackend::openblas);  // nothing to multiply
  blas::set_gemm_backend(GemmBackend::automatic);
  CHECK(blas::gemm_backend() == GemmBackend::automatic);
  // automatic follows this machine's rule, whatever the shape
  for (bool ta : {false, true})
    for (bool tb : {false, true})
      for (auto [M, N, K] : {std::tuple{64, 64, 64}, std::tuple{512, 128, 512}, std::tuple{256, 3072, 768},
                             std::tuple{1152, 384, 2048}, std::tuple{384, 384, 2048}})
        CHECK(blas::gemm_backend_for(ta, tb, M, N, K) ==
              (blas::auto_picks_dnnl(blas::auto_rule(), ta, tb, M, N, K) ? GemmBackend::dnnl : GemmBackend::openblas));
}

TEST_CASE("blas::auto_picks_dnnl: the rules measured on AVX-512 and on AVX2 kernels", "[blas]") {
  using blas::AutoRule;
  const std::string core = blas_core_name();
  CHECK(blas::auto_rule() ==
        (core == "SkylakeX" || core == "Cooperlake" || core == "SapphireRapids" ? AutoRule::avx512 : AutoRule::avx2));
  for (bool ta : {false, true})
    for (bool tb : {false, true}) {
      // AVX-512: OpenBLAS for an output of at most 64x64 with K below 256, whatever the transposes.
      CHECK_FALSE(blas::auto_picks_dnnl(AutoRule::avx512, ta, tb, 64, 64, 64));
      CHECK_FALSE(blas::auto_picks_dnnl(AutoRule::avx512, ta, tb, 64, 32, 255));
      CHECK(blas::auto_picks_dnnl(AutoRule::avx512, ta, tb, 64, 64, 256));
      CHECK(blas::auto_picks_dnnl(AutoRule::avx512, ta, tb, 64, 128, 64));
      CHECK(blas::auto_picks_dnnl(AutoRule::avx512, ta, tb, 512, 128, 512));
      CHECK(blas::auto_picks_dnnl(AutoRule::avx512, ta, tb, 256, 3072, 768));
    }
  for (bool tb : {false, true}) {
    // AVX2, NN and NT: oneDNN but for a short, wide product (M <= 256 rows, N >= 768 columns).
    CHECK(blas::auto_picks_dnnl(AutoRule::avx2, false, tb, 64, 64, 64));  // small: oneDNN on AVX2
    CHECK(blas::auto_picks_dnnl(AutoRule::avx2, false, tb, 512, 128, 512));
    CHECK(blas::auto_picks_dnnl(AutoRule::avx2, false, tb, 2048, 1536, 384));
    CHECK(blas::auto_picks_dnnl(AutoRule::avx2, false, tb, 257, 3072, 768));
    CHECK(blas::auto_picks_dnnl(AutoRule::avx2, false, tb, 256, 767, 768));
    CHECK_FALSE(blas::auto_picks_dnnl(AutoRule::avx2, false, tb, 256, 768, 768));
    CHECK_FALSE(blas::auto_picks_dnnl(AutoRule::avx2, false, tb, 256, 50257, 768));
    CHECK_FALSE(blas::auto_picks_dnnl(AutoRule::avx2, false, tb, 1, 768, 64));
    // AVX2, TN (a weight gradient over K rows): oneDNN over at most 256 rows, or into an output of
    // at least 640x640 elements.
    CHECK(blas::auto_picks_dnnl(AutoRule::avx2, true, tb, 2304, 768, 256));
    CHECK(blas::auto_picks_dnnl(AutoRule::avx2, true, tb, 64, 64, 64));
    CHECK_FALSE(blas::auto_picks_dnnl(AutoRule::avx2, true, tb, 512, 128, 257));
    CHECK_FALSE(blas::auto_picks_dnnl(AutoRule::avx2, true, tb, 384, 384, 2048));
    CHECK_FALSE(blas::auto_picks_dnnl(AutoRule::avx2, true, tb, 640, 639, 2048));
    CHECK(blas::auto_picks_dnnl(AutoRule::avx2, true, tb, 640, 640, 2048));
    CHECK(blas::auto_picks_dnnl(AutoRule::avx2, true, tb, 1152, 384, 2048));
  }
}

TEST_CASE("blas::parse_gemm_backend and TAPEGRAD_GEMM_BACKEND name a bad value", "[blas]") {
  for (GemmBackend b : {GemmBackend::openblas, GemmBackend::dnnl, GemmBackend::automatic})
    CHECK(blas::parse_gemm_backend(blas::gemm_backend_name(b)) == b);
  CHECK(std::string(blas::gemm_backend_name(GemmBackend::automatic)) == "auto");
  CHECK_THROWS_AS(blas::parse_gemm_backend("automatic"), ValueError);
  CHECK_THROWS_WITH(blas::parse_gemm_backend("mkl"), Catch::Contains("'mkl'") && Catch::Contains("openblas, dnnl, auto or tapegrad"));
  {
    BackendEnvGuard env("");  // unset: automatic is the default of a build with oneDNN
    CHECK(blas::gemm_backend_from_env() == GemmBackend::automatic);
  }
  {
    BackendEnvGuard env("openblas");
    CHECK(blas::gemm_backend_from_env() == GemmBackend::openblas);
  }
  {
    BackendEnvGuard env("dnnl");
    CHECK(blas::gemm_backend_from_env() == GemmBackend::dnnl);
  }
  {
    BackendEnvGuard env("DNNL");  // names are lower case
    CHECK_THROWS_WITH(blas::gemm_backend_from_env(),
                      Catch::Contains("TAPEGRAD_GEMM_BACKEND=DNNL") && Catch::Contains("openblas, dnnl, auto or tapegrad"));
  }
}
