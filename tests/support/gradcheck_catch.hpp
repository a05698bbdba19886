// gradcheck_catch.hpp — gradcheck as a Catch2 assertion that prints the worst mismatch.
#pragma once

#include <catch2/catch.hpp>
#include <tapegrad/tapegrad.hpp>

namespace tapegrad::testing {

// The sanitizer build (TAPEGRAD_SANITIZE) checks gradients in gradcheck's fast mode: one
// random projection vᵀJu per input instead of every Jacobian entry (autograd/gradcheck.hpp).
// What that build looks for, a bad read or write or undefined behaviour, depends on the code
// each op's forward and backward run, and fast mode runs all of it, with a random v as the
// output's gradient instead of one one-hot vector after another. The Release build checks
// every entry. Under the sanitizers the full Jacobians took half of the suite's time: the
// model-sized gradgradchecks alone 160 s of 560.
#ifdef TAPEGRAD_TESTS_FAST_GRADCHECK
inline constexpr bool kFastGradcheck = true;
#else
inline constexpr bool kFastGradcheck = false;
#endif

// gradcheck and gradgradcheck as this build runs them in CHECK_GRADCHECK and
// CHECK_GRADGRADCHECK.
inline GradcheckResult gradcheck_for_this_build(const GradcheckFn& fn, const TensorList& inputs,
                                                GradcheckOptions options = {}) {
  options.fast_mode = options.fast_mode || kFastGradcheck;
  return gradcheck(fn, inputs, options);
}

inline GradcheckResult gradgradcheck_for_this_build(const GradcheckFn& fn, const TensorList& inputs,
                                                    GradcheckOptions options = {}) {
  options.fast_mode = options.fast_mode || kFastGradcheck;
  return gradgradcheck(fn, inputs, options);
}

}  // namespace tapegrad::testing

// Fails the test case when a gradcheck result is not ok, printing its report (the worst
// mismatch). The checks below expand to it.
#define TAPEGRAD_CHECK_GRADCHECK_RESULT(result_expression)                                        \
  do {                                                                                            \
    const ::tapegrad::GradcheckResult gc_result_ = (result_expression);                           \
    INFO(gc_result_.report);                                                                      \
    CHECK(gc_result_.ok);                                                                         \
  } while (0)

// CHECK_GRADCHECK(fn, inputs[, options]): fn is TensorList -> Tensor, inputs float64 leaves;
// fails printing the worst mismatch (in fast mode under the sanitizers, above).
#define CHECK_GRADCHECK(fn, ...) \
  TAPEGRAD_CHECK_GRADCHECK_RESULT(::tapegrad::testing::gradcheck_for_this_build(fn, __VA_ARGS__))

// CHECK_GRADGRADCHECK(fn, inputs[, options]): the same for second derivatives (gradgradcheck).
#define CHECK_GRADGRADCHECK(fn, ...) \
  TAPEGRAD_CHECK_GRADCHECK_RESULT(::tapegrad::testing::gradgradcheck_for_this_build(fn, __VA_ARGS__))

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
