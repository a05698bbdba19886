// test_gemm_census.cpp — the census counts every blas::gemm call by shape and transpose
// flags, from every thread, only while a guard lives; a rate is measured on a transposed call.
#include <catch2/catch.hpp>

#include <cmath>

#include <tapegrad/autograd/cpu/gemm_census.hpp>
#include <tapegrad/autograd/cpu/gemm_rate.hpp>
#include <tapegrad/tapegrad.hpp>

using namespace tapegrad;

TEST_CASE("GemmCensus: a matmul and its backward, by shape", "[gemm-census]") {
  const Tensor a = ones({2, 3}).requires_grad_(), b = ones({3, 4}).requires_grad_();
  GemmCensus census;
  {
    GemmCensusGuard taking(census);
    sum(matmul(a, b)).backward();
  }
  // forward C = A·B (2x4x3); backward dA = dC·Bᵀ (2x3x4, NT), dB = Aᵀ·dC (3x4x2, TN)
  REQUIRE(census.total_calls() == 3);
  CHECK(census.calls.at(GemmCall{DType::float32, false, false, 2, 4, 3}) == 1);
  CHECK(census.total_flops() == 2.0 * (2 * 4 * 3 + 2 * 3 * 4 + 3 * 4 * 2));
  CHECK(GemmCall{DType::float32, false, true, 2, 3, 4}.str() == "float32 NT 2x3x4");
  // every counted shape was timed too
  REQUIRE(census.seconds.size() == census.calls.size());
  for (const auto& [call, seconds] : census.seconds) {
    CHECK(census.calls.count(call) == 1);
    CHECK(seconds >= 0);
    CHECK(std::isfinite(seconds));
  }
  sum(matmul(a, b)).backward();  // no census: nothing counted
  CHECK(census.total_calls() == 3);
}

TEST_CASE("GemmCensus: batched products count once per matrix, and guards do not nest", "[gemm-census]") {
  GemmCensus census;
  GemmCensusGuard taking(census);
  matmul(ones({5, 2, 3}), ones({5, 3, 4}));
  CHECK(census.calls.at(GemmCall{DType::float32, false, false, 2, 4, 3}) == 5);
  GemmCensus other;
  CHECK_THROWS_AS(GemmCensusGuard(other), ValueError);
}

TEST_CASE("measure_gemm_flops_per_second: transposed calls of a census", "[gemm-census][gemm-rate]") {
  for (const GemmCall call : {GemmCall{DType::float32, true, false, 48, 40, 32}, GemmCall{DType::float64, false, true, 48, 40, 32}}) {
    const GemmRate r = measure_gemm_flops_per_second(call, 0.01);
    CHECK(r.flops_per_second > 0);
    CHECK(std::isfinite(r.flops_per_second));
    CHECK(r.repetitions >= 3);
  }
  CHECK_THROWS_AS(measure_gemm_flops_per_second(GemmCall{DType::float32, true, true, 0, 4, 4}, 0.01), ValueError);
}
