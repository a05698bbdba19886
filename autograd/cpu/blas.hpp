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

// C[M,N] = op(A) · op(B) + bias, the bias (N values) added to every row: a linear's forward.
// Where tapegrad's own kernel runs the product (GemmBackend::tapegrad) it adds the bias from its
// registers; elsewhere the bias is copied into C's rows and gemm adds the product (beta = 1).
// The same bits either way (the bias plus the product's sum, PyTorch's addmm order).
template <typename T>
void gemm_with_bias(bool trans_a, bool trans_b, std::int64_t M, std::int64_t N, std::int64_t K, const T* A,
                    std::int64_t lda, const T* B, std::int64_t ldb, const T* bias, T* C, std::int64_t ldc);

// Which library runs blas::gemm<float> (double always runs on OpenBLAS):
//   openblas   every product: the default, and the reference of the GEMM floor in
//              bench/README.md;
//   dnnl       every product on oneDNN's dnnl_sgemm (built with TAPEGRAD_WITH_DNNL);
//   automatic  each product on the library measured faster for its shape class, by a rule for
//              AVX-512 kernels and one for AVX2 (AutoRule below): the default of a build with
//              TAPEGRAD_WITH_DNNL (bench/README.md, "GEMM per shape");
//   tapegrad   tapegrad's own AVX-512 kernel (blocked_sgemm.hpp) for the one-thread
//              products of the classes where it was measured faster, OpenBLAS for the rest; the
//              same bits as OpenBLAS's SkylakeX kernels (needs a build for AVX-512: TAPEGRAD_NATIVE
//              on an AVX-512 CPU).
// One-row and one-column products run as gemv on OpenBLAS whatever the choice.
// The environment variable TAPEGRAD_GEMM_BACKEND=openblas|dnnl|auto|tapegrad sets the choice at
// the first product, unless set_gemm_backend() was called before.
enum class GemmBackend { openblas, dnnl, automatic, tapegrad };

// Throws ValueError when `backend` is not available in this build (dnnl or automatic without
// TAPEGRAD_WITH_DNNL, tapegrad without AVX-512).
void set_gemm_backend(GemmBackend backend);
// The current choice; reads TAPEGRAD_GEMM_BACKEND the first time (ValueError naming the value
// when it is not one of the four, or names a backend not built in).
GemmBackend gemm_backend();
// The library that runs this float product under the current choice: openblas, dnnl or tapegrad,
// never automatic (it resolves the rule; one-row and one-column products are openblas's gemv).
GemmBackend gemm_backend_for(bool trans_a, bool trans_b, std::int64_t M, std::int64_t N, std::int64_t K);
// automatic's rule depends on the machine: oneDNN and OpenBLAS rank differently on AVX-512 and
// on AVX2 kernels (measured on both, blas.cpp and bench/README.md, "GEMM per shape").
//   avx512  OpenBLAS's SkylakeX, Cooperlake or SapphireRapids kernels
//   avx2    any other family (Haswell, Zen, ...)
enum class AutoRule { avx512, avx2 };
// The rule of this process: from the kernel family OpenBLAS runs (blas_core_name()).
AutoRule auto_rule();
// Whether automatic runs this float product on oneDNN under `rule` (gemm_backend_for applies it
// with auto_rule(); one-row and one-column products are gemv before any rule).
bool auto_picks_dnnl(AutoRule rule, bool trans_a, bool trans_b, std::int64_t M, std::int64_t N, std::int64_t K);
// Whether this build has the backend: openblas always, dnnl and automatic with TAPEGRAD_WITH_DNNL,
// tapegrad when compiled for AVX-512.
bool gemm_backend_available(GemmBackend backend);
// "openblas", "dnnl", "auto", "tapegrad", and back (ValueError naming the text and the choices).
const char* gemm_backend_name(GemmBackend backend);
GemmBackend parse_gemm_backend(const std::string& text);
// The choice TAPEGRAD_GEMM_BACKEND asks for (the build's default when unset), checked as above; what
// gemm_backend() reads the first time.
GemmBackend gemm_backend_from_env();
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
