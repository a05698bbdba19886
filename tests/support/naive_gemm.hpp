// naive_gemm.hpp — the reference product the BLAS tests compare against: row-major,
// element by element, summed in double; and one product's operands for those tests
// (GemmProblem). Header-only (tests/CMakeLists.txt compiles only test_*.cpp).
#pragma once

#include <cmath>
#include <cstddef>
#include <string>
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

// One product C = alpha·op(A)·op(B) + beta·C for the BLAS tests: A and B filled with fixed
// values, every leading dimension `pad` wider than its matrix (the padding between C's rows must
// stay as it was), and C0, C before the product: NaN everywhere when beta is 0, so that an
// element the product leaves unwritten shows.
template <typename T>
struct GemmProblem {
  bool ta, tb;
  int M, N, K;
  T alpha, beta;
  int pad;
  std::vector<T> A, B, C0;
  GemmProblem(bool ta_, bool tb_, int M_, int N_, int K_, T alpha_, T beta_, int pad_ = 3)
      : ta(ta_), tb(tb_), M(M_), N(N_), K(K_), alpha(alpha_), beta(beta_), pad(pad_) {
    A.resize(std::size_t(ta ? K : M) * std::size_t(lda()));
    B.resize(std::size_t(tb ? N : K) * std::size_t(ldb()));
    C0.resize(std::size_t(M) * std::size_t(ldc()));
    for (std::size_t i = 0; i < A.size(); ++i) A[i] = static_cast<T>(std::sin(0.7 * double(i) + 0.1));
    for (std::size_t i = 0; i < B.size(); ++i) B[i] = static_cast<T>(std::cos(0.3 * double(i) + 0.2));
    for (std::size_t i = 0; i < C0.size(); ++i) C0[i] = beta == T(0) ? NAN : static_cast<T>(0.01 * double(i % 97));
  }
  int lda() const { return (ta ? M : K) + pad; }
  int ldb() const { return (tb ? K : N) + pad; }
  int ldc() const { return N + pad; }
  // C after the naive product.
  std::vector<T> reference() const {
    std::vector<T> C = C0;
    naive_gemm(ta, tb, M, N, K, alpha, A, lda(), B, ldb(), beta, C, ldc());
    return C;
  }
  std::string str() const {
    return std::string(ta ? "T" : "N") + (tb ? "T " : "N ") + std::to_string(M) + "x" + std::to_string(N) + "x" +
           std::to_string(K) + ", alpha " + std::to_string(alpha) + ", beta " + std::to_string(beta);
  }
};

}  // namespace tapegrad::testing
