// blas.hpp — the only door to BLAS, and the thread-count setting shared by OpenBLAS and
// tapegrad's own OpenMP loops (one pool for everything: see docs).
#pragma once

#include <cstdint>
#include <string>

namespace tapegrad {

namespace blas {
// C[M,N] = alpha · op(A) · op(B) + beta · C, row-major, where op(X) is X or Xᵀ.
// A is (M, K) — or (K, M) stored when trans_a — with leading dimension lda; likewise B.
// A product with one row or one column (M = 1 or N = 1) runs as a matrix-vector product.
template <typename T>
void gemm(bool trans_a, bool trans_b, std::int64_t M, std::int64_t N, std::int64_t K, T alpha,
          const T* A, std::int64_t lda, const T* B, std::int64_t ldb, T beta, T* C,
          std::int64_t ldc);
}  // namespace blas

// The kernel family OpenBLAS chose for this CPU ("SkylakeX", "Haswell", "Prescott", ...).
std::string blas_core_name();
// Warns once on stderr when OpenBLAS runs its generic kernels on a CPU that has AVX2 or
// AVX-512, with the fix (OPENBLAS_CORETYPE set before the program starts). Called the first
// time a matmul runs.
void check_blas_core_once();

// One setting for both OpenMP loops and OpenBLAS. Defaults to TAPEGRAD_NUM_THREADS when set.
void set_num_threads(int n);
int get_num_threads();

}  // namespace tapegrad
