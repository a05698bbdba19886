// parallel.hpp — when our own loops go parallel.
//
// Loops over fewer elements than kParallelGrain stay on one thread: starting an OpenMP team
// costs a few microseconds, more than the work itself for small tensors.
//
// On a combined `parallel for simd` the condition must name the construct it is for:
//   #pragma omp parallel for simd if (parallel : n > kParallelGrain)
// A bare `if (n > kParallelGrain)` applies to the simd construct as well (OpenMP 5.0), and GCC
// then runs the loop scalar whenever it stays on one thread: one token's GELU while
// generating took 16 floats per instruction only above the grain.
#pragma once

#include <cstdint>

namespace tapegrad {

constexpr std::int64_t kParallelGrain = 1 << 15;

}  // namespace tapegrad
