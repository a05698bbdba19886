// denormals.cpp — MXCSR's FTZ and DAZ bits, on every thread that computes (denormals.hpp).
#include "denormals.hpp"

#include <atomic>

#include <omp.h>
#if defined(__SSE__)
#include <xmmintrin.h>
#endif

namespace tapegrad {

namespace {

std::atomic<bool> flushing{false};

#if defined(__SSE__)
// MXCSR bit 15 is flush-to-zero (FTZ: subnormal results become 0), bit 6 denormals-are-zero
// (DAZ: subnormal inputs read as 0). Each thread has its own MXCSR.
constexpr unsigned kFtzDaz = 0x8040;
void apply_here(bool on) { _mm_setcsr(on ? (_mm_getcsr() | kFtzDaz) : (_mm_getcsr() & ~kFtzDaz)); }
#endif

}  // namespace

bool set_flush_denormal(bool on) {
#if defined(__SSE__)
  flushing = on;
  apply_here(on);
  // Every thread of the pool, once each: a parallel region of the pool's full size.
#pragma omp parallel num_threads(omp_get_max_threads())
  apply_here(on);
  return true;
#else
  (void)on;
  return false;
#endif
}

bool flush_denormal() { return flushing; }

}  // namespace tapegrad
