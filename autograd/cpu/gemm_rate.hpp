// gemm_rate.hpp — how fast this machine multiplies matrices, measured: the FLOP/s of one
// GEMM shape through blas::gemm (the call every matmul and Linear of tapegrad makes), with
// the current thread count (get_num_threads()).
//
//   const GemmRate r = measure_gemm_flops_per_second(DType::float32, {512, 512, 512}, 0.3);
//   // r.flops_per_second: 2·M·N·K per product over the best timed repetition
//
// It is the denominator of the model-FLOPs utilization (training/mfu.hpp) and the "GEMM
// floor" of a benchmark: the time a step would take if all its products ran at this rate.
// A rate, not a peak of the hardware: the BLAS kernels on this shape, this many threads,
// with whatever else the machine is doing at the time.
#pragma once

#include <cstdint>
#include <string>

#include "../dtype.hpp"
#include "gemm_census.hpp"

namespace tapegrad {

struct GemmShape {
  std::int64_t M = 512, N = 512, K = 512;  // C (M, N) = A (M, K) · B (K, N)
  std::string str() const;                 // "512x512x512"
};

struct GemmRate {
  double flops_per_second = 0;  // 2·M·N·K / (seconds of the fastest product)
  std::int64_t repetitions = 0;  // products timed
  int threads = 0;              // get_num_threads() during the measurement
};

// Multiplies two random matrices of `shape` (float32 or float64) repeatedly for about
// `seconds` (at least 3 times, after one untimed product that warms the caches and the
// threads) and reports the fastest: the rate the kernels reach, not disturbed by a
// preemption. Throws ValueError on a non-positive shape or duration, DTypeError on an
// integer dtype.
GemmRate measure_gemm_flops_per_second(DType dtype, const GemmShape& shape = {}, double seconds = 0.3);
// The same for one call of a census (gemm_census.hpp), with its transpose flags: op(A) is
// stored transposed when trans_a, as the step's own call stores it (NT and TN products of one
// size run at different speeds).
GemmRate measure_gemm_flops_per_second(const GemmCall& call, double seconds = 0.3);

}  // namespace tapegrad
