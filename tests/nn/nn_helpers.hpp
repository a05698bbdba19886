// nn_helpers.hpp — small helpers shared by the tests of nn/: comparing tensors, overwriting
// parameters with random values, and gradcheck inputs made of an input plus a module's
// parameters. Header-only (tests/CMakeLists.txt compiles only tests/*/test_*.cpp).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include <catch2/catch.hpp>
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

// CHECK that two tensors agree within atol, printing both shapes and the worst difference.
#define CHECK_CLOSE(actual, expected, atol)                                                        \
  do {                                                                                             \
    const ::tapegrad::Tensor cc_a_ = (actual), cc_e_ = (expected);                                 \
    INFO(#actual " " << ::tapegrad::shape_str(cc_a_.shape()) << " vs " #expected " "              \
                     << ::tapegrad::shape_str(cc_e_.shape()) << ": max |diff| = "                  \
                     << ::tapegrad::testing::max_abs_diff(cc_a_, cc_e_));                          \
    CHECK(::tapegrad::testing::max_abs_diff(cc_a_, cc_e_) <= (atol));                              \
  } while (0)

// Overwrites t in place (not recorded) with N(0, scale²) values drawn from a generator
// seeded by seed: moves parameters away from special init values (ones, zeros).
inline void randomize_(Tensor t, std::uint64_t seed, double scale = 1.0) {
  Generator gen(seed);
  normal_(t, 0.0, scale, gen);
}

// Randomizes every parameter of m, each with its own seed.
inline void randomize_parameters_(const nn::Module& m, std::uint64_t seed, double scale = 0.5) {
  for (const Tensor& p : m.parameters()) randomize_(p, seed++, scale);
}

// The gradcheck inputs: `inputs` first, then every parameter of m (leaves the module shares,
// so gradcheck's in-place perturbations reach the module).
inline TensorList with_parameters(TensorList inputs, const nn::Module& m) {
  for (const Tensor& p : m.parameters()) inputs.push_back(p);
  return inputs;
}

// Standard deviation (population) of all elements of t.
inline double std_of(const Tensor& t) {
  const std::vector<double> v = t.to_vector();
  double mean = 0;
  for (double x : v) mean += x;
  mean /= static_cast<double>(v.size());
  double var = 0;
  for (double x : v) var += (x - mean) * (x - mean);
  return std::sqrt(var / static_cast<double>(v.size()));
}

}  // namespace tapegrad::testing
