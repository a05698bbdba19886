// parallel.hpp — when our own loops go parallel.
//
// Loops over fewer elements than kParallelGrain stay on one thread: starting an OpenMP team
// costs a few microseconds, more than the work itself for small tensors.
#pragma once

#include <cstdint>

namespace tapegrad {

constexpr std::int64_t kParallelGrain = 1 << 15;

}  // namespace tapegrad
