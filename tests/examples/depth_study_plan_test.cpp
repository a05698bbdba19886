// The depth study's plan (examples/studies/depth_study/plan.hpp): which runs --stop-after still
// starts. A session that ends at a set time kills what runs then, and a killed run is lost, so
// a run starts only when it would end in time at the slowest rate seen so far.
#include <catch2/catch.hpp>

#include "depth_study/plan.hpp"

using depth_study::fits_before;

TEST_CASE("--stop-after: no limit starts every run", "[depth_study][plan]") {
  CHECK(fits_before(0, 0, 1e9, 1.0));
  CHECK(fits_before(1e6, 0, 1e9, 1.0));
}

TEST_CASE("--stop-after: a run starts only when it would end before the limit", "[depth_study][plan]") {
  // 100 s into a 600 s sitting, at 0.01 s per block-step: 50,000 block-steps end at 600 s exactly
  CHECK(fits_before(100, 600, 50'000, 0.01));
  CHECK_FALSE(fits_before(100, 600, 50'001, 0.01));
  CHECK(fits_before(100, 600, 100, 0.01));  // a cheaper run still fits after a dear one did not
  // before the first run ends the rate is unknown: a run starts while there is time left
  CHECK(fits_before(599, 600, 1e9, 0));
  CHECK_FALSE(fits_before(600, 600, 1, 0));
  CHECK_FALSE(fits_before(700, 600, 0, 0.01));
}
