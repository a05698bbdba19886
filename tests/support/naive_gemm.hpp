// naive_gemm.hpp — the reference product the BLAS tests compare against: row-major,
// element by element, summed in double. Header-only (tests/CMakeLists.txt compiles only
// test_*.cpp).
#pragma once

#include <vector>

namespace tapegrad::testing {

// C = alpha·op(A)·op(B) + beta·C computed element by element (beta 0 ignores C).
template <typename T>
void naive_gemm(bool ta, bool tb, int M, int N, int K, T alpha, const std::vector<T>& A, int lda,
                const std::vector<T>& B, int ldb, T beta, std::vector<T>& C, int ldc) {
  for (int i = 0; i < M; ++i)
    for (int j = 0; j < N; ++j) {
      double s = 0;
      for (int k = 0; k < K; ++k) s += double(ta ? A[k * lda + i] : A[i * lda + k]) * double(tb ? B[j * ldb + k] : B[k * ldb + j]);
      T& c = C[i * ldc + j];
      c = static_cast<T>(alpha * s + (beta == T(0) ? 0.0 : double(beta) * double(c)));
    }
}

}  // namespace tapegrad::testing
