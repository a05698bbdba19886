// gelu.hpp — GELU and its slope for one element, in both of PyTorch's forms. Shared by the
// elementwise gelu op (unary.cpp) and the fused feed-forward op (gelu_mlp.cpp), so that both
// give the same bits.
//
//   exact ("none"):  y = x·Φ(x),  Φ(x) = (1 + erf(x/√2))/2,  φ(x) = exp(−x²/2)/√(2π)
//                    y' = Φ(x) + x·φ(x)
//   tanh:            u = √(2/π)(x + 0.044715x³),  y = x(1 + tanh u)/2
//                    y' = (1 + tanh u)/2 + x(1 − tanh²u)/2 · √(2/π)(1 + 3·0.044715x²)
// (Hendrycks and Gimpel, "Gaussian Error Linear Units", 2016.)
#pragma once

#include <cmath>
#include <numbers>
#include <type_traits>

#include "../cpu/vec_math.hpp"

namespace tapegrad::gelu_math {

// Constants of the tanh form: √(2/π) and the cubic coefficient.
constexpr double kTanhScale = std::numbers::sqrt2 * std::numbers::inv_sqrtpi;
constexpr double kTanhCubic = 0.044715;

// The exact form evaluates erf in double also for float (erf is not vectorized either way).
template <typename T>
inline T exact(T x) {
  return static_cast<T>(x * (1 + std::erf(x / std::numbers::sqrt2)) / 2);
}

template <typename T>
inline T exact_slope(T x) {
  using std::numbers::inv_sqrtpi;
  using std::numbers::sqrt2;
  const T cdf = (1 + std::erf(x / T(sqrt2))) / 2;
  const T pdf = std::exp(-x * x / 2) * T(inv_sqrtpi / sqrt2);
  return cdf + x * pdf;
}

// tanh u of the tanh form, vectorizable for float (vec::tanh_for_gelu). For float the exp wants
// 2u: (2·√(2/π))·v is 2·(√(2/π)·v) to the bit (doubling is exact, the constant's too) unless
// √(2/π)·v is subnormal, where tanh u comes out 0 either way, so it is one product instead of
// two. (GELU's value is the same for all 2³² floats, checked against the two products.)
template <typename T>
inline T tanh_of(T x) {
  const T v = x + T(kTanhCubic) * x * x * x;
  if constexpr (std::is_same_v<T, float>) return vec::tanh_for_gelu_of_2u(static_cast<float>(2 * kTanhScale) * v);
  else return vec::tanh_for_gelu(T(kTanhScale) * v);
}

// The value and the slope from x and t = tanh u: a pass that needs both computes t once.
template <typename T>
inline T tanh_form_given(T x, T t) {
  return x * (1 + t) / 2;
}

// For float on a target with FMA the three multiply-adds are written out: left to the compiler
// (C++ lets it fuse a product into an add), which products it fuses changed with the code
// around them (a change to exp moved 0.3% of the slopes by an ulp). These are the ones it had
// fused. The halving and √(2/π) are one product, by √(2/π)/2: halving is exact unless the
// result is subnormal, and a term that small vanishes in the last multiply-add, which adds it
// to (1 + t)/2 (the backward pass over 512 × 512 167 → 162 µs). The same bits for all 2³²
// floats, checked against the code before.
template <typename T>
inline T tanh_form_slope_given(T x, T t) {
#if defined(__FMA__)
  if constexpr (std::is_same_v<T, float>) {
    const float one_minus_t2 = std::fma(-t, t, 1.0f);                         // 1 − tanh²u
    const float cubic_slope = std::fma(3 * float(kTanhCubic) * x, x, 1.0f);   // 1 + 3·0.044715x²
    return std::fma(x * one_minus_t2 * float(kTanhScale / 2), cubic_slope, (1 + t) / 2);
  }
#endif
  return (1 + t) / 2 + x * (1 - t * t) / 2 * T(kTanhScale) * (1 + 3 * T(kTanhCubic) * x * x);
}

template <typename T>
inline T tanh_form(T x) {
  return tanh_form_given(x, tanh_of(x));
}

template <typename T>
inline T tanh_form_slope(T x) {
  return tanh_form_slope_given(x, tanh_of(x));
}

}  // namespace tapegrad::gelu_math
