// test_blas_gemv.cpp — blas::gemm with one row (M = 1) or one column (N = 1) runs as gemv
// (blas.cpp): every transpose flag, leading dimensions wider than the matrices, beta 0 over a
// C that holds NaN (it must be overwritten) and beta 1 (accumulate), against a naive product.
#include <catch2/catch.hpp>

#include <cmath>
#include <vector>

#include <tapegrad/autograd/cpu/blas.hpp>

#include "support/naive_gemm.hpp"

using namespace tapegrad;
using tapegrad::testing::GemmProblem;

namespace {


template <typename T>
void check_shape(bool ta, bool tb, int M, int N, int K, T beta) {
  const GemmProblem<T> p(ta, tb, M, N, K, T(1.5), beta);
  const int ldc = p.ldc();
  std::vector<T> C = p.C0;
  blas::gemm<T>(ta, tb, M, N, K, p.alpha, p.A.data(), p.lda(), p.B.data(), p.ldb(), beta, C.data(), ldc);
  const std::vector<T> expected = p.reference();
  const double tol = sizeof(T) == 4 ? 1e-4 : 1e-12;
  for (int i = 0; i < M; ++i)
    for (int j = 0; j < N; ++j) {
      INFO("trans_a " << ta << ", trans_b " << tb << ", M " << M << ", N " << N << ", K " << K << ", beta "
                      << beta << ", element (" << i << ", " << j << ")");
      CHECK(std::abs(double(C[i * ldc + j]) - double(expected[i * ldc + j])) <= tol * (1 + std::abs(double(expected[i * ldc + j]))));
    }
  // The padding between rows is never written.
  for (int i = 0; i < M; ++i)
    for (int j = N; j < ldc; ++j) CHECK((std::isnan(double(C[i * ldc + j])) || C[i * ldc + j] == expected[i * ldc + j]));
}

}  // namespace

TEST_CASE("blas::gemm with one row or one column equals the naive product", "[blas]") {
  for (bool ta : {false, true})
    for (bool tb : {false, true})
      for (auto [M, N] : {std::pair{1, 37}, std::pair{29, 1}, std::pair{1, 1}}) {
        check_shape<float>(ta, tb, M, N, 19, 0.0f);
        check_shape<float>(ta, tb, M, N, 19, 1.0f);
        check_shape<double>(ta, tb, M, N, 19, 0.0);
        check_shape<double>(ta, tb, M, N, 19, 1.0);
      }
}
