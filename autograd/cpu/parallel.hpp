// parallel.hpp — when our own loops go parallel, and how they enter a team of threads.
//
// Loops over fewer elements than kParallelGrain stay on one thread: starting an OpenMP team
// costs a few microseconds, more than the work itself for small tensors.
//
// Such a loop is written as a region that parallel_region_if enters only when it pays, with the
// loop's worksharing inside it:
//   parallel_region_if(n > kParallelGrain, [&] {
//   #pragma omp for simd
//     for (std::int64_t i = 0; i < n; ++i) y[i] = f(x[i]);
//   });
// Why not `#pragma omp parallel for if (n > kParallelGrain)`: with the condition false, or with
// one thread allowed, libgomp still enters and leaves a region (a team of one), and it leaves
// every region with a futex wake, a system call. On this project's virtual machines that call
// took 1.05 µs and the whole empty region 1.2 µs, against 4 ns for the same work without it
// (an AMD EPYC, Zen 5); S's training step on one thread made about 160 of them, 0.2 ms of its
// 17 ms. A worksharing loop (`#pragma omp for`) met outside any region runs all its iterations
// on the calling thread, in order, as a team of one: the results are those of the region's.
// (Also for `omp for simd`: the loop is vectorized either way.)
#pragma once

#include <omp.h>

#include <cstdint>

namespace tapegrad {

constexpr std::int64_t kParallelGrain = 1 << 15;

// Whether a region entered now would have more than one thread: more than one allowed, and not
// nested past the levels OpenMP allows to be active (by default one: a region inside another
// runs on one thread).
inline bool more_than_one_thread_available() {
  return omp_get_max_threads() > 1 && omp_get_active_level() < omp_get_max_active_levels();
}

// region() on a team of all the threads when `worth` it and a team would have more than one
// thread; otherwise region() on this thread alone, outside OpenMP, unless this thread is one of a
// team already (a region inside a parallel loop, as the optimizer's over small parameters): a
// worksharing loop binds to the innermost region around it, so there it would share its
// iterations with the other threads of that team, which never reach it. It gets a team of its
// own, of one thread, as `#pragma omp parallel if (false)` gave it.
template <typename Region>
void parallel_region_if(bool worth, Region&& region) {
  if (worth && more_than_one_thread_available()) {
#pragma omp parallel
    region();
  } else if (omp_get_num_threads() > 1) {
#pragma omp parallel num_threads(1)
    region();
  } else {
    region();
  }
}

}  // namespace tapegrad
