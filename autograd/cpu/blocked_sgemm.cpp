// blocked_sgemm.cpp — tapegrad's own float GEMM for AVX-512 (see blocked_sgemm.hpp for the loops
// and why). Row-major throughout: op(A)'s element (i, k) is A[i·lda + k], or A[k·lda + i] when
// trans_a; op(B)'s (k, j) is B[k·ldb + j], or B[j·ldb + k] when trans_b.
#include "blocked_sgemm.hpp"

#include <omp.h>

#include <algorithm>
#include <array>
#include <cstdlib>
#include <memory>
#include <new>
#include <utility>

#if defined(__AVX512F__)
#include <immintrin.h>

#include "transpose.hpp"
#endif

namespace tapegrad::detail {

namespace {

// The rule of GemmBackend::tapegrad, measured on an Intel Xeon (family 6, model 207) at one thread
// against cblas_sgemm with SkylakeX kernels (bench/README.md, "tapegrad's own GEMM, built"): on S's
// products (up to 512x128x512, 2^25 multiply-adds) it took 0.85-0.95 of OpenBLAS's time, NN, NT
// and TN alike, in the cache or not. On M's (from 2048x384x384, 2^28) it was no faster inside
// the library (NN 2048x384x1536 157.0 against 157.2 GFLOP/s) and its TN products slower (A's
// columns lie lda floats apart: 1536x384x2048 1.04x the time), so larger products stay on
// OpenBLAS, whose packing is then paid for by more work per packed element.
// Products of at most 100³ multiply-adds stay on OpenBLAS too: its small-matrix kernels read
// both operands in place already (attention's per-head products).
constexpr double kFromMultiplyAdds = 100.0 * 100.0 * 100.0;
constexpr double kUpToMultiplyAdds = 1 << 26;

// Larger NN and NT products with a single block of K (K ≤ 448), on an AMD CPU. There the kernel
// writes each element of C once, from its registers, where OpenBLAS zeroes C (or a linear copies
// its bias into it) and then adds the product to it; and it reads A in place where OpenBLAS
// packs it. On a Zen 5 EPYC, M's K-384 products (NT 2048x1536x384, 2048x1152x384 and
// 2048x384x384 with their bias, NN 2048x1536x384 and 2048x384x384) took 0.93-0.98 of
// OpenBLAS's time alone, and M's whole step, alternating step by step between the two libraries
// in one process (train_step --versus), about 0.985 of its time (the medians of 16-30 pairs in
// seven runs: 0.983-0.994, and 0.999 in a slow spell of the host; the same library on both
// sides: 1.000-1.003). TN products stay on OpenBLAS (the kernel reads their A across rows lda
// apart: up to 18% slower on M's), and so do products of two or more blocks of K (M's step in
// pairs: 0.990 and 1.002 with them, 0.986 without). On the Xeon (family 6, model 207) the K-384
// products were no faster, so the rule leaves Intel's CPUs as they were (bench/README.md, "a
// tenth day").
constexpr std::int64_t kOneBlockOfK = 448;  // OpenBLAS's block of K (kSplitQ below)

bool one_block_of_k_pays() {
  static const bool amd = [] {
    __builtin_cpu_init();
    return __builtin_cpu_is("amd");
  }();
  return amd;
}

}  // namespace

#if defined(__AVX512F__)

namespace {

// The blocks of K, cut as OpenBLAS 0.3.21 cuts them (driver/level3/level3.c, with the SkylakeX
// kernels' SGEMM_DEFAULT_Q 448 and unroll 16): steps of kSplitQ while at least two remain, then
// the rest in two halves rounded up to a multiple of kSplitUnroll (K 512: 256 + 256; K 1536: 448,
// 448, 320, 320). Where a block ends decides where C is rounded, so cutting K as OpenBLAS does
// gives its bits. Found by comparing C against cblas_sgemm for K from 384 to 2100 (bitwise at
// 448 and 16; at 480, or at 448 with 64, K 1024 came out different).
constexpr std::int64_t kSplitQ = 448;
static_assert(kSplitQ == kOneBlockOfK, "the rule's single block of K is OpenBLAS's block");
constexpr std::int64_t kSplitUnroll = 16;

std::int64_t next_k_block(std::int64_t remaining) {
  if (remaining >= 2 * kSplitQ) return kSplitQ;
  if (remaining > kSplitQ) return (remaining / 2 + kSplitUnroll - 1) / kSplitUnroll * kSplitUnroll;
  return remaining;
}

// The tile: kRows rows of C (12 fill 24 of the 32 vector registers with two vectors each) and
// kPanel = 32 columns (two vectors of 16 floats). kColumnBlock columns of B are packed at a
// time: a 448 × 512 block is 0.9 MB, half of this Xeon's L2 (512 ran 4-7% faster than 128 on
// M's NN and NT products, which then read A's rows 4 times fewer).
constexpr int kRows = 12;
constexpr int kPanel = 32;
constexpr std::int64_t kColumnBlock = 512;
constexpr std::int64_t kPrefetchAhead = 8;

// ---- packing op(B): kc × nc as panels of 32 columns, k-major, zeros past nc

// The panel buffer of this thread, grown to the largest block once (no allocation per product).
float* panel_buffer(std::int64_t floats) {
  struct Freed {
    void operator()(float* p) const { std::free(p); }
  };
  thread_local std::unique_ptr<float[], Freed> buffer;
  thread_local std::int64_t capacity = 0;
  if (floats > capacity) {
    buffer.reset(static_cast<float*>(std::aligned_alloc(64, static_cast<std::size_t>(floats) * sizeof(float))));
    if (!buffer) throw std::bad_alloc();
    capacity = floats;
  }
  return buffer.get();
}

// Which of a panel's 32 columns exist when only `width` do: a mask for each half of 16.
struct ColumnMasks {
  __mmask16 lo, hi;
};

ColumnMasks column_masks(int width) {
  return {static_cast<__mmask16>(width >= 16 ? 0xFFFF : (1u << width) - 1),
          static_cast<__mmask16>(width >= kPanel ? 0xFFFF : width > 16 ? (1u << (width - 16)) - 1 : 0)};
}

// Columns [j0, j0 + width) of B's rows [k0, k0 + kc), B stored (K, N): each row's 32 floats are
// contiguous, two vector loads (masked past the last column).
void pack_rows(float* panel, const float* B, std::int64_t ldb, std::int64_t k0, std::int64_t kc, std::int64_t j0,
               int width) {
  const ColumnMasks m = column_masks(width);
  for (std::int64_t k = 0; k < kc; ++k) {
    const float* row = B + (k0 + k) * ldb + j0;
    _mm512_store_ps(panel + k * kPanel, _mm512_maskz_loadu_ps(m.lo, row));
    _mm512_store_ps(panel + k * kPanel + 16, _mm512_maskz_loadu_ps(m.hi, row + 16));
  }
}

// The same from B stored (N, K) (trans_b): the panel is a transpose, done a 16 × 16 tile at a
// time in registers (transpose.hpp), the k and column remainders one element at a time.
void pack_columns(float* panel, const float* B, std::int64_t ldb, std::int64_t k0, std::int64_t kc, std::int64_t j0,
                  int width) {
  std::int64_t k = 0;
  if (width == kPanel)
    for (; k + 16 <= kc; k += 16)
      for (int j = 0; j < kPanel; j += 16)
        transpose_tile::in_registers(panel + k * kPanel + j, kPanel, B + (j0 + j) * ldb + k0 + k, ldb);
  for (; k < kc; ++k)
    for (int j = 0; j < kPanel; ++j) panel[k * kPanel + j] = j < width ? B[(j0 + j) * ldb + k0 + k] : 0.0f;
}

// ---- the tile: C[rows × 32] from A's rows and one panel

// How a tile meets C: the first block of K writes C (its sum, plus the bias or zeros) unless the
// product accumulates; every later block, and the first one of an accumulating product, adds.
struct TileEnd {
  bool add_to_c;
  const float* bias;  // the panel's 32 bias values, or nullptr; used when !add_to_c
};

template <int Rows, bool TransA>
inline void tile(const float* a, std::int64_t lda, const float* panel, std::int64_t kc, float* c, std::int64_t ldc,
                 TileEnd end, __mmask16 lo, __mmask16 hi) {
  // Every loop over the rows is unrolled, so each sum is a register of its own: with these two
  // loops rolled, GCC kept the arrays on the stack, zeroed them with two calls to memset, and
  // stored and reloaded all 24 sums after the k loop. On a Zen 5 core memset was 4% of S's
  // samples; unrolled, S's twelve products took 1-2.5% less time alone (bench/README.md), with
  // the same bits.
  __m512 sum_lo[Rows], sum_hi[Rows];
#pragma GCC unroll 12
  for (int r = 0; r < Rows; ++r) sum_lo[r] = sum_hi[r] = _mm512_setzero_ps();
  for (std::int64_t k = 0; k < kc; ++k) {
    // A stored (K, M): each k's 12 elements are on a line of their own, lda floats from the last,
    // and with lda a multiple of 512 they fall into few cache sets; asking for the line 8 steps
    // ahead took TN 512x128x512 from 1.03 to 0.93 of OpenBLAS's time (4 and 12: no better).
    if (TransA && k + kPrefetchAhead < kc)
      _mm_prefetch(reinterpret_cast<const char*>(a + (k + kPrefetchAhead) * lda), _MM_HINT_T0);
    const __m512 b_lo = _mm512_load_ps(panel + k * kPanel), b_hi = _mm512_load_ps(panel + k * kPanel + 16);
#pragma GCC unroll 12
    for (int r = 0; r < Rows; ++r) {
      const __m512 a_rk = _mm512_set1_ps(TransA ? a[k * lda + r] : a[r * lda + k]);
      sum_lo[r] = _mm512_fmadd_ps(a_rk, b_lo, sum_lo[r]);
      sum_hi[r] = _mm512_fmadd_ps(a_rk, b_hi, sum_hi[r]);
    }
  }
  // sum + 0 (no bias) as OpenBLAS's zeroed C plus its sum: the same bits, -0 included.
  const __m512 base_lo = end.bias ? _mm512_maskz_loadu_ps(lo, end.bias) : _mm512_setzero_ps();
  const __m512 base_hi = end.bias ? _mm512_maskz_loadu_ps(hi, end.bias + 16) : _mm512_setzero_ps();
#pragma GCC unroll 12
  for (int r = 0; r < Rows; ++r) {
    float* row = c + r * ldc;
    const __m512 old_lo = end.add_to_c ? _mm512_maskz_loadu_ps(lo, row) : base_lo;
    const __m512 old_hi = end.add_to_c ? _mm512_maskz_loadu_ps(hi, row + 16) : base_hi;
    _mm512_mask_storeu_ps(row, lo, _mm512_add_ps(old_lo, sum_lo[r]));
    _mm512_mask_storeu_ps(row + 16, hi, _mm512_add_ps(old_hi, sum_hi[r]));
  }
}

// One band of `Rows` rows of C across all the panels of a packed block of nc columns.
template <int Rows, bool TransA>
void band(const float* a, std::int64_t lda, const float* panels, std::int64_t kc, std::int64_t nc, float* c,
          std::int64_t ldc, bool add_to_c, const float* bias) {
  for (std::int64_t j = 0; j < nc; j += kPanel) {
    const ColumnMasks m = column_masks(static_cast<int>(std::min<std::int64_t>(kPanel, nc - j)));
    tile<Rows, TransA>(a, lda, panels + j * kc, kc, c + j, ldc, {add_to_c, bias ? bias + j : nullptr}, m.lo, m.hi);
  }
}

using Band = void (*)(const float*, std::int64_t, const float*, std::int64_t, std::int64_t, float*, std::int64_t, bool,
                      const float*);

template <bool TransA, int... Rows>
constexpr auto band_table(std::integer_sequence<int, Rows...>) {
  return std::array<Band, sizeof...(Rows)>{band<Rows + 1, TransA>...};
}

// band_for[trans_a][rows − 1]: the last band of C may have fewer than 12 rows.
constexpr std::array<std::array<Band, kRows>, 2> band_for{
    band_table<false>(std::make_integer_sequence<int, kRows>{}),
    band_table<true>(std::make_integer_sequence<int, kRows>{})};

}  // namespace

bool blocked_sgemm_available() { return true; }

void blocked_sgemm(bool trans_a, bool trans_b, std::int64_t M, std::int64_t N, std::int64_t K, const float* A,
                   std::int64_t lda, const float* B, std::int64_t ldb, const float* bias, bool accumulate, float* C,
                   std::int64_t ldc) {
  const std::int64_t panel_columns = (std::min(kColumnBlock, N) + kPanel - 1) / kPanel * kPanel;
  float* panels = panel_buffer(std::min(kSplitQ, K) * panel_columns);
  for (std::int64_t j0 = 0; j0 < N; j0 += kColumnBlock) {
    const std::int64_t nc = std::min(kColumnBlock, N - j0);
    for (std::int64_t k0 = 0, kc = 0; k0 < K; k0 += kc) {
      kc = next_k_block(K - k0);
      for (std::int64_t j = 0; j < nc; j += kPanel) {
        const int width = static_cast<int>(std::min<std::int64_t>(kPanel, nc - j));
        if (trans_b) pack_columns(panels + j * kc, B, ldb, k0, kc, j0 + j, width);
        else pack_rows(panels + j * kc, B, ldb, k0, kc, j0 + j, width);
      }
      const bool add_to_c = accumulate || k0 > 0;
      for (std::int64_t i = 0; i < M; i += kRows) {
        const int rows = static_cast<int>(std::min<std::int64_t>(kRows, M - i));
        const float* a = trans_a ? A + k0 * lda + i : A + i * lda + k0;
        band_for[trans_a][rows - 1](a, lda, panels, kc, nc, C + i * ldc + j0, ldc, add_to_c,
                                    bias ? bias + j0 : nullptr);
      }
    }
  }
}

#else  // no AVX-512 in this build: GemmBackend::tapegrad runs everything on OpenBLAS

bool blocked_sgemm_available() { return false; }

void blocked_sgemm(bool, bool, std::int64_t, std::int64_t, std::int64_t, const float*, std::int64_t, const float*,
                   std::int64_t, const float*, bool, float*, std::int64_t) {
  std::abort();  // unreachable: blocked_sgemm_takes() is false in this build
}

#endif

bool blocked_sgemm_takes(bool trans_a, [[maybe_unused]] bool trans_b, std::int64_t M,
                         std::int64_t N, std::int64_t K, float alpha, float beta) {
  if (!blocked_sgemm_available() || alpha != 1.0f || (beta != 0.0f && beta != 1.0f)) return false;
  if (omp_get_max_threads() != 1 && !omp_in_parallel()) return false;  // one thread: OpenBLAS splits it otherwise
  if (M <= 0 || N <= 0 || K <= 0) return false;
  const double multiply_adds = static_cast<double>(M) * static_cast<double>(N) * static_cast<double>(K);
  if (multiply_adds <= kFromMultiplyAdds) return false;
  return multiply_adds <= kUpToMultiplyAdds || (!trans_a && K <= kOneBlockOfK && one_block_of_k_pays());
}

}  // namespace tapegrad::detail
