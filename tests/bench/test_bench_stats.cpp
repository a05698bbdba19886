// test_bench_stats.cpp — the median and quantiles the benchmarks print (bench/bench_stats.hpp):
// nearest rank, so every figure is a measured time, and an even count's median is the upper of
// the two middle values, as bench/README.md's figures have been taken.
#include <vector>

#include <catch2/catch.hpp>

#include "../../bench/bench_stats.hpp"

using tapegrad::bench::median;
using tapegrad::bench::quantile;

TEST_CASE("bench_stats: quantiles by nearest rank, in any input order", "[bench]") {
  const std::vector<double> five = {5, 1, 4, 2, 3};
  CHECK(median(five) == 3);
  CHECK(quantile(five, 0.0) == 1);
  CHECK(quantile(five, 0.25) == 2);   // rank round(0.25 · 4) = 1
  CHECK(quantile(five, 0.75) == 4);
  CHECK(quantile(five, 1.0) == 5);
  CHECK(five == std::vector<double>{5, 1, 4, 2, 3});  // taken by value: the caller's order kept
}

TEST_CASE("bench_stats: an even count's median is the upper middle value, a measured one", "[bench]") {
  CHECK(median({4, 1, 3, 2}) == 3);       // not 2.5, the mean of the middle two
  CHECK(quantile({4, 1, 3, 2}, 0.25) == 2);  // rank round(0.75) = 1
  CHECK(median({7, 9}) == 9);
}

TEST_CASE("bench_stats: one value, and none", "[bench]") {
  CHECK(median({2.5}) == 2.5);
  CHECK(quantile({2.5}, 0.9) == 2.5);
  CHECK(median({}) == 0.0);  // nothing timed: zero, not a read past the end
}
