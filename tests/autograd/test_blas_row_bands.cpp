// test_blas_row_bands.cpp — at two threads, blas::gemm runs a product whose C has at least as
// many rows as columns (and 2^20 multiply-adds or more) as one OpenBLAS call per thread, each on
// a band of C's rows (blas.cpp). Every transpose flag, row counts that are no multiple of the
// bands' 16, leading dimensions wider than the matrices, beta 0 over a C that holds NaN (every
// row must be written, by exactly one band) and beta 1 (accumulate), against a naive product;
// also from inside a parallel region (one OpenBLAS call on one thread there) and at 3 threads
// (OpenBLAS's own split), where no bands are taken.
#include <catch2/catch.hpp>

#include <omp.h>

#include <cmath>
#include <vector>

#include <tapegrad/autograd/cpu/blas.hpp>

#include "support/blas_guards.hpp"
#include "support/naive_gemm.hpp"

using namespace tapegrad;
using tapegrad::testing::GemmProblem;
using tapegrad::testing::ThreadCountGuard;

namespace {

template <typename T>
void check_shape(bool ta, bool tb, int M, int N, int K, T beta, bool inside_region) {
  const GemmProblem<T> p(ta, tb, M, N, K, T(1.5), beta, 5);
  const int ldc = p.ldc();
  std::vector<T> C = p.C0;
  const auto product = [&] {
    blas::gemm<T>(ta, tb, M, N, K, p.alpha, p.A.data(), p.lda(), p.B.data(), p.ldb(), beta, C.data(), ldc);
  };
  if (inside_region) {
#pragma omp parallel num_threads(2)
    {
#pragma omp single
      product();
    }
  } else {
    product();
  }
  const std::vector<T> expected = p.reference();
  const double tol = sizeof(T) == 4 ? 2e-4 : 1e-11;  // K up to 211 terms of size ~1.5
  int wrong = 0, padding_written = 0;
  for (int i = 0; i < M; ++i) {
    for (int j = 0; j < N; ++j) {
      const double got = double(C[i * ldc + j]), want = double(expected[i * ldc + j]);
      if (!(std::abs(got - want) <= tol * (1 + std::abs(want)))) ++wrong;
    }
    for (int j = N; j < ldc; ++j)  // the padding between rows is never written
      if (!(std::isnan(double(C[i * ldc + j])) || C[i * ldc + j] == expected[i * ldc + j])) ++padding_written;
  }
  INFO("threads " << get_num_threads() << (inside_region ? " (inside a parallel region)" : "") << ", trans_a " << ta
                  << ", trans_b " << tb << ", M " << M << ", N " << N << ", K " << K << ", beta " << beta);
  CHECK(wrong == 0);
  CHECK(padding_written == 0);
}

}  // namespace

TEST_CASE("blas::gemm in bands of rows per thread equals the naive product", "[blas]") {
  ThreadCountGuard guard;
  // Each shape has M >= N and M·N·K >= 2^20: it takes the bands at 2 threads.
  const int shapes[][3] = {{203, 61, 97}, {1000, 40, 30}, {131, 131, 211}};
  for (int threads : {2, 3}) {
    set_num_threads(threads);
    for (bool ta : {false, true})
      for (bool tb : {false, true})
        for (const auto& s : shapes)
          for (bool inside : {false, true}) {
            check_shape<float>(ta, tb, s[0], s[1], s[2], 0.0f, inside);
            check_shape<float>(ta, tb, s[0], s[1], s[2], 1.0f, inside);
            check_shape<double>(ta, tb, s[0], s[1], s[2], 0.0, inside);
            check_shape<double>(ta, tb, s[0], s[1], s[2], 1.0, inside);
          }
  }
}
