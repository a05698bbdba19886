// test_parallel.cpp — parallel_region_if (autograd/cpu/parallel.hpp): a region worth a team runs on
// all the threads; one that is not, or with one thread allowed, runs on the calling thread
// without entering OpenMP at all (what saves libgomp's system call); and a region met inside a
// team of several threads gets a team of its own, so that its loop does not share its
// iterations with the threads around it.
#include <omp.h>

#include <array>
#include <cstdint>

#include <tapegrad/autograd/cpu/parallel.hpp>

#include <catch2/catch.hpp>

#include "support/blas_guards.hpp"

using namespace tapegrad;
using tapegrad::testing::ThreadCountGuard;

namespace {

struct Seen {
  int team_size = 0;
  int level = -1;
  std::int64_t iterations = 0;  // of the loop inside, summed over the team
};

// The region's team size and nesting level, and how many iterations of a 100-long loop ran.
Seen run_region(bool worth) {
  Seen seen;
  std::int64_t iterations = 0;
  parallel_region_if(worth, [&] {
#pragma omp single
    {
      seen.team_size = omp_get_num_threads();
      seen.level = omp_get_level();
    }
#pragma omp for reduction(+ : iterations)
    for (int i = 0; i < 100; ++i) iterations += 1;
  });
  seen.iterations = iterations;
  return seen;
}

}  // namespace

TEST_CASE("parallel_region_if: a team only where it is worth one and more than one thread is allowed", "[parallel]") {
  ThreadCountGuard threads;
  omp_set_num_threads(2);
  const Seen team = run_region(true);
  CHECK(team.team_size == 2);
  CHECK(team.level == 1);
  CHECK(team.iterations == 100);

  const Seen alone = run_region(false);  // not worth it: no region at all
  CHECK(alone.team_size == 1);
  CHECK(alone.level == 0);
  CHECK(alone.iterations == 100);

  omp_set_num_threads(1);  // worth it, but one thread allowed: no region either
  const Seen one = run_region(true);
  CHECK(one.team_size == 1);
  CHECK(one.level == 0);
  CHECK(one.iterations == 100);
}

TEST_CASE("parallel_region_if inside a team of two: each thread's region runs its whole loop", "[parallel]") {
  ThreadCountGuard threads;
  omp_set_num_threads(2);
  std::array<Seen, 2> seen{};
  int team = 0;
#pragma omp parallel num_threads(2)
  {
#pragma omp single
    team = omp_get_num_threads();
    // Each thread runs a region of its own, as the optimizer's threads update a parameter each.
    // Without a team of its own, the loop inside would bind to this team and give each thread
    // half of the iterations.
    seen[static_cast<std::size_t>(omp_get_thread_num())] = run_region(true);
  }
  if (team != 2) {
    WARN("the runtime gave the outer region " << team << " thread(s): nothing to check");
    return;
  }
  for (const Seen& s : seen) {
    CHECK(s.team_size == 1);
    CHECK(s.iterations == 100);
  }
}
