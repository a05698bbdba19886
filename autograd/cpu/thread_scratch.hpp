// thread_scratch.hpp — internal: each thread's scratch in a kernel's parallel region.
//
// `per_thread` zeroed Ts for each thread the region may have, in one block from the tensor
// allocator's cache (../storage.hpp: a block of bytes, no Tensor). In the steady state of
// training or decoding it takes no new memory; a std::vector per call was a heap allocation
// per layer and call (per token, while generating).
//
// Each thread's slice starts on its own cache line: two threads that write one line take it
// from each other's cache at every write ("false sharing"). (LayerNorm's backward kept its
// threads' shares of dweight and dbias back to back in one std::vector, where one line could
// hold the end of one and the start of the next; measured in M's step on 2 threads, moving
// them here made no difference beyond the noise: 5.0-6.8 against 5.7-7.5 ms a step for the 13
// LayerNorm backwards, 4 alternating runs. It is kept for the rule, and for the heap
// allocation per call that it saves.)
//
// The block is a power of two bytes: decoding asks for one key more at every token, and exact
// sizes would take new memory for every new size class (64 bytes apart below 4 KiB), powers
// of two for a handful over a whole generation.
//   ThreadScratch<float> scores(Tq * Tk);        // before the region
//   #pragma omp parallel
//   { float* S = scores.mine(); ... }
#pragma once

#include <omp.h>

#include <bit>
#include <cstddef>
#include <cstdint>

#include "../storage.hpp"

namespace tapegrad::detail {

template <typename T>
class ThreadScratch {
 public:
  explicit ThreadScratch(std::int64_t per_thread)
      : per_thread_((per_thread * std::int64_t(sizeof(T)) + 63) / 64 * 64 / std::int64_t(sizeof(T))),
        storage_(std::bit_ceil(static_cast<std::size_t>(per_thread_) * sizeof(T) *
                               static_cast<std::size_t>(omp_get_max_threads())),
                 true) {}
  // The calling thread's slice, inside the region.
  T* mine() { return of(omp_get_thread_num()); }
  // Thread t's slice: to combine the slices after the region.
  T* of(int t) { return static_cast<T*>(storage_.data()) + per_thread_ * t; }

 private:
  std::int64_t per_thread_;
  Storage storage_;
};

}  // namespace tapegrad::detail
