// blocked_sgemm.hpp — internal: tapegrad's own float GEMM for AVX-512, GemmBackend::tapegrad
// (blas.hpp). Only blas.cpp calls it.
//
// What it saves over cblas_sgemm on one thread. OpenBLAS copies both operands into packed
// panels before its kernel runs, and scales C by beta in a pass of its own (zeros for beta = 0,
// and a linear copies its bias into C before a beta = 1 product). In a small model's step the
// copies of the operand it broadcasts (A's rows) and those passes over C were a tenth of the
// time (perf, S: OpenBLAS's packing 9.8% of the samples, the bias copies 2.2%, the zeroing 1.6%).
// This kernel packs B only, reads A where it lies, and writes C once from its registers, adding
// the bias there.
//
//   C (M, N) = op(A) (M, K) · op(B) (K, N)  [+ bias, one value per column]  [+ C when accumulate]
//
// The loops (Goto and van de Geijn, "Anatomy of high-performance matrix multiplication", 2008):
//   for each block of 512 of C's columns
//     for each block of K (kc ≤ 448 steps)
//       pack op(B)'s kc × 512 block as panels of 32 columns, k-major (L2: up to 0.9 MB)
//       for each 12 rows of C
//         for each panel: C's 12 × 32 tile += A's 12 × kc rows · the panel's kc × 32
// The tile is 24 registers of 16 floats, each k step two loads of the panel and 12 broadcasts
// of A's elements feeding 24 multiply-adds.
//
// The bits are OpenBLAS's SkylakeX kernels' to the last one (tested): every element of C is
// the sum of its products in k order, one block of K at a time from zero, each block then added
// to C, and the blocks of K are cut as OpenBLAS 0.3.21 cuts them (kSplitQ, kSplitUnroll).
#pragma once

#include <cstdint>

namespace tapegrad::detail {

// Whether this build has the kernel: compiled for AVX-512 (TAPEGRAD_NATIVE on an AVX-512 CPU).
bool blocked_sgemm_available();

// Whether GemmBackend::tapegrad runs this product on the kernel (blas.cpp sends the rest to
// OpenBLAS): an AVX-512 build, one thread (or inside a parallel region), alpha 1, beta 0 or 1,
// and the sizes where it was measured faster (blocked_sgemm.cpp): between 100³ and 2^26
// multiply-adds, and on an AMD CPU also larger products with one block of K (K ≤ 448).
bool blocked_sgemm_takes(bool trans_a, bool trans_b, std::int64_t M, std::int64_t N, std::int64_t K, float alpha,
                         float beta);

// C = op(A)·op(B) + bias (bias: N values added to every row, or nullptr), plus C's old values
// when accumulate. Any M, N, K ≥ 1, any leading dimensions; the caller has checked
// blocked_sgemm_available().
void blocked_sgemm(bool trans_a, bool trans_b, std::int64_t M, std::int64_t N, std::int64_t K, const float* A,
                   std::int64_t lda, const float* B, std::int64_t ldb, const float* bias, bool accumulate, float* C,
                   std::int64_t ldc);

}  // namespace tapegrad::detail
