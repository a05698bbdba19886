// bench_stats.hpp — the order statistics the benchmarks print: a median and quantiles of timings.
// One definition, so that train_step, checkpointing and ddp_scaling mean the same by "median".
//
// The q-quantile is the element of rank round(q·(n − 1)) of the sorted values (nearest rank, no
// interpolation): every figure printed is a time that was measured. The median is the 0.5-quantile,
// which for an even count is the upper of the two middle values (sorted[n / 2]), as train_step has
// printed since it began. (checkpointing's summary over the rounds took the mean of the two middle
// values before; with an odd count of rounds, as bench/README.md runs it, nothing changes.)
#pragma once

#include <algorithm>
#include <cstddef>
#include <utility>
#include <vector>

namespace tapegrad::bench {

// Of an empty vector: 0 (a benchmark with nothing timed prints zeros rather than crashing).
inline double quantile(std::vector<double> values, double q) {
  if (values.empty()) return 0.0;
  std::sort(values.begin(), values.end());
  const auto rank = static_cast<std::size_t>(q * static_cast<double>(values.size() - 1) + 0.5);
  return values[std::min(rank, values.size() - 1)];
}

inline double median(std::vector<double> values) { return quantile(std::move(values), 0.5); }

}  // namespace tapegrad::bench
