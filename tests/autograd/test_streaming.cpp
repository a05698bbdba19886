// test_streaming.cpp — for_each_block (autograd/cpu/streaming.hpp): its blocks cover [0, n) exactly
// once, in order within each thread, for sizes around the block, the prefetch distance and the
// threads' 64-element boundaries, on one thread and on a team.
#include <omp.h>

#include <cstdint>
#include <vector>

#include <tapegrad/autograd/cpu/streaming.hpp>

#include <catch2/catch.hpp>

using namespace tapegrad;

namespace {

// How many times each element was visited, and whether any block came out of order or empty.
struct Visits {
  std::vector<int> count;
  bool bad_block = false;
};

Visits visit_all(std::int64_t n) {
  Visits v{std::vector<int>(static_cast<std::size_t>(n), 0)};
  std::vector<float> data(static_cast<std::size_t>(n) + 1);  // prefetched, never read
  for_each_block(n, [&](std::int64_t begin, std::int64_t end) {
    if (!(0 <= begin && begin < end && end <= n && end - begin <= kStreamBlock)) {
#pragma omp critical
      v.bad_block = true;
      return;
    }
    for (std::int64_t i = begin; i < end; ++i) {
#pragma omp atomic
      ++v.count[static_cast<std::size_t>(i)];
    }
  }, data.data());
  return v;
}

}  // namespace

TEST_CASE("for_each_block visits every element once, on one thread and on a team", "[streaming]") {
  const int threads = GENERATE(1, 2, 3);
  const std::int64_t n = GENERATE(as<std::int64_t>{}, 0, 1, 63, 64, 255, 256, 257, 2047, 2049, 4096 + 65,
                                  kParallelGrain + 1, 3 * kParallelGrain + 17);
  CAPTURE(threads, n);
  const int before = omp_get_max_threads();
  omp_set_num_threads(threads);
  const Visits v = visit_all(n);
  omp_set_num_threads(before);
  CHECK_FALSE(v.bad_block);
  std::int64_t wrong = 0;
  for (const int c : v.count) wrong += c != 1;
  CHECK(wrong == 0);
}
