// set_flush_denormal: subnormal floats become 0 on the calling thread and in the OpenMP pool,
// normal values are untouched, and turning it off brings the subnormals back.
#include <catch2/catch.hpp>

#include <cfloat>
#include <vector>

#include <omp.h>

#include <tapegrad/autograd/cpu/denormals.hpp>
#include <tapegrad/autograd/cpu/blas.hpp>

using namespace tapegrad;

namespace {
// A product whose exact value is subnormal: FLT_MIN / 4 (volatile: computed at run time).
float subnormal_product() {
  volatile float tiny = FLT_MIN, quarter = 0.25f;
  return tiny * quarter;
}
}  // namespace

TEST_CASE("set_flush_denormal flushes subnormal results to zero, on every thread of the pool", "[denormals]") {
  REQUIRE(subnormal_product() == FLT_MIN / 4);  // off: the subnormal itself
  REQUIRE(set_flush_denormal(true));
  CHECK(flush_denormal());
  CHECK(subnormal_product() == 0.0f);
  volatile float normal = 3.0f;
  CHECK(normal * 0.5f == 1.5f);
  const int n = omp_get_max_threads();
  std::vector<float> seen(static_cast<std::size_t>(n), -1.0f);
#pragma omp parallel num_threads(n)
  seen[static_cast<std::size_t>(omp_get_thread_num())] = subnormal_product();
  for (float v : seen) CHECK(v == 0.0f);

  set_num_threads(n + 1);  // a larger pool: its new thread flushes too
  std::vector<float> grown(static_cast<std::size_t>(n + 1), -1.0f);
#pragma omp parallel num_threads(n + 1)
  grown[static_cast<std::size_t>(omp_get_thread_num())] = subnormal_product();
  for (float v : grown) CHECK(v == 0.0f);
  set_num_threads(n);

  REQUIRE(set_flush_denormal(false));
  CHECK_FALSE(flush_denormal());
  CHECK(subnormal_product() == FLT_MIN / 4);
#pragma omp parallel num_threads(n)
  seen[static_cast<std::size_t>(omp_get_thread_num())] = subnormal_product();
  for (float v : seen) CHECK(v == FLT_MIN / 4);
}
