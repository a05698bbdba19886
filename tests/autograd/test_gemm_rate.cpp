// test_gemm_rate.cpp — measure_gemm_flops_per_second (autograd/cpu/gemm_rate.hpp): a positive,
// finite rate, the thread count it ran with, and errors for what cannot be measured.
#include <cmath>

#include <catch2/catch.hpp>
#include <tapegrad/tapegrad.hpp>

using namespace tapegrad;

TEST_CASE("gemm rate: a positive finite FLOP/s for float32 and float64", "[gemm-rate][blas]") {
  for (DType dtype : {DType::float32, DType::float64}) {
    const GemmRate r = measure_gemm_flops_per_second(dtype, {64, 48, 32}, 0.02);
    CHECK(std::isfinite(r.flops_per_second));
    CHECK(r.flops_per_second > 1e6);  // any CPU does a million FLOP/s
    CHECK(r.repetitions >= 3);
    CHECK(r.threads == get_num_threads());
  }
  // It leaves the default generator where it was.
  manual_seed(5);
  const double a = randn({1}).item();
  manual_seed(5);
  measure_gemm_flops_per_second(DType::float32, {16, 16, 16}, 0.001);
  CHECK(randn({1}).item() == a);
  CHECK(GemmShape{}.str() == "512x512x512");
}

TEST_CASE("gemm rate: refuses a shape or a dtype it cannot measure", "[gemm-rate][blas]") {
  CHECK_THROWS_AS(measure_gemm_flops_per_second(DType::float32, {0, 4, 4}, 0.01), ValueError);
  CHECK_THROWS_AS(measure_gemm_flops_per_second(DType::float32, {4, 4, 4}, 0), ValueError);
  CHECK_THROWS_AS(measure_gemm_flops_per_second(DType::int64, {4, 4, 4}, 0.01), DTypeError);
}

TEST_CASE("mfu: model FLOPs over the measured peak", "[gemm-rate][training]") {
  training::Mfu m;
  m.flops_per_token = 1e6;
  m.peak.flops_per_second = 1e11;
  m.peak.threads = 2;
  CHECK(m.of(2.3e4) == Approx(0.23));
  CHECK(m.text(2.3e4) == "MFU 23%");
  CHECK(m.text(4.2e3) == "MFU 4.2%");
  m.processes = 2;
  CHECK(m.of(4.6e4) == Approx(0.23));
  CHECK(m.peak_line() == "GEMM peak: 100 GFLOP/s (float32, 2 threads, 512x512x512)");
}
