// gradcheck_catch.hpp — gradcheck as a Catch2 assertion that prints the worst mismatch.
#pragma once

#include <catch2/catch.hpp>
#include <tapegrad/tapegrad.hpp>

// CHECK_GRADCHECK(fn, inputs): fn is TensorList -> Tensor, inputs float64 leaves.
#define CHECK_GRADCHECK(fn, ...)                                           \
  do {                                                                     \
    const ::tapegrad::GradcheckResult gc_result_ = ::tapegrad::gradcheck(fn, __VA_ARGS__); \
    INFO(gc_result_.report);                                               \
    CHECK(gc_result_.ok);                                                  \
  } while (0)

// CHECK_GRADGRADCHECK(fn, inputs): the same for second derivatives (gradgradcheck).
#define CHECK_GRADGRADCHECK(fn, ...)                                                 \
  do {                                                                               \
    const ::tapegrad::GradcheckResult ggc_result_ = ::tapegrad::gradgradcheck(fn, __VA_ARGS__); \
    INFO(ggc_result_.report);                                                        \
    CHECK(ggc_result_.ok);                                                           \
  } while (0)

namespace tapegrad::testing {

// A float64 leaf that requires grad, with values drawn from a generator seeded by `seed`.
inline Tensor param(const Shape& shape, std::uint64_t seed, double scale = 1.0) {
  Generator gen(seed);
  Tensor t = randn(shape, gen, DType::float64);
  if (scale != 1.0) {
    double* p = t.data<double>();
    for (std::int64_t i = 0; i < t.numel(); ++i) p[i] *= scale;
  }
  return t.requires_grad_();
}

// Values bounded away from 0 (for log, sqrt, div, pow): |x| in [lo, lo + 1].
inline Tensor positive_param(const Shape& shape, std::uint64_t seed, double lo = 0.5) {
  Generator gen(seed);
  Tensor t = rand(shape, gen, DType::float64);
  double* p = t.data<double>();
  for (std::int64_t i = 0; i < t.numel(); ++i) p[i] += lo;
  return t.requires_grad_();
}

}  // namespace tapegrad::testing
