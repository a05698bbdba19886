// tensor_diff.hpp — the largest elementwise difference of two tensors, the measure the tests
// compare against a tolerance. Header-only (tests/CMakeLists.txt compiles only test_*.cpp).
#pragma once

#include <algorithm>
#include <cmath>
#include <vector>

#include <tapegrad/tapegrad.hpp>

namespace tapegrad::testing {

// max |a - b| over all elements; infinity when the shapes differ or a value is NaN.
inline double max_abs_diff(const Tensor& a, const Tensor& b) {
  if (a.shape() != b.shape()) return INFINITY;
  const std::vector<double> va = a.to_vector(), vb = b.to_vector();
  double worst = 0;
  for (std::size_t i = 0; i < va.size(); ++i) {
    const double d = std::abs(va[i] - vb[i]);
    if (std::isnan(d)) return INFINITY;
    worst = std::max(worst, d);
  }
  return worst;
}

}  // namespace tapegrad::testing
