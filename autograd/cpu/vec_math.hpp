// vec_math.hpp — exp and tanh that the compiler can vectorize.
//
// A call to the C library's expf or tanhf cannot be vectorized (without -ffast-math), and in a
// transformer step those calls dominate: GELU's tanh on every hidden activation, softmax's
// exp on every attention score and logit. These versions are plain arithmetic, so a loop
// marked `#pragma omp simd` runs 16 floats per instruction on AVX-512. float64 keeps the C
// library (gradchecks and references run in float64, where exactness matters more).
//
//   exp(x) = 2ⁿ · eʳ,  n = round(x / ln 2),  r = x − n·ln 2 ∈ [−ln2/2, ln2/2]
//   eʳ by its Taylor polynomial of degree 7 (remainder < r⁸/8! ≈ 5e-9, below float's 6e-8
//   half-ulp); ln 2 split in two constants (Cody and Waite) so r is exact to float precision.
//   2ⁿ is built directly from its bits: 2^(n−1) is (n + 126) << 23, times 2p.
// Measured error: within 1.2 ulp of e^x (tests/autograd/test_vec_math.cpp).
#pragma once

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

namespace tapegrad::vec {

// exp_float's range: e^x is inf above kExpMax and 0 below kExpMin (no subnormal results).
inline constexpr float kExpMax = 88.7228317f;
inline constexpr float kExpMin = -87.3365479f;

namespace detail {
// kExpMin and kExpMax again, defined in vec_math.cpp, out of sight of the loops that call exp.
// Why: with the bounds in sight, GCC threads the clamp's two branches through the rest of the
// function (it knows e^kExpMin, and so GELU's value, on each), and after vectorizing it pays
// for that with three compares and three blends instead of a max and a min. Bounds it cannot
// see leave it nothing to fold: vmaxps, vminps. (GELU's forward pass over 512 × 512 124 → 116
// µs with this alone, the same bits.) Compiled together with this file (LTO), GCC may thread
// them again: slower, but the same numbers (the two forms agree on all 2³² floats).
extern const float kExpClampLow, kExpClampHigh;
}  // namespace detail

// e^x for x clamped to [kExpMin, kExpMax]: always finite (exp(kExpMax) ≈ 3.4e38 above the
// range, 0 below it), NaN in, garbage out. For callers that need neither inf nor NaN (GELU's
// tanh); exp_float below adds them.
inline float exp_float_clamped(float x) {
  constexpr float kLog2e = 1.44269504088896341f;
  constexpr float kLn2Hi = 0.693359375f;          // ln 2 to 10 bits: n·kLn2Hi is exact
  constexpr float kLn2Lo = -2.12194440e-4f;       // ln 2 − kLn2Hi
  constexpr float kRound = 12582912.0f;           // 1.5·2²³: adding it rounds to an integer
  constexpr auto kRoundBits = std::bit_cast<std::uint32_t>(kRound);  // those of kRound + n are kRoundBits + n
  // Plain * and + (no std::fma: without an FMA instruction in the target it is a library call).
  // The clamp as two selects, one bound each, the bounds out of sight (above): a max and a
  // min. A NaN passes both, as before.
  float xc = x < detail::kExpClampLow ? detail::kExpClampLow : x;
  xc = xc > detail::kExpClampHigh ? detail::kExpClampHigh : xc;
  const float rounded = xc * kLog2e + kRound;  // kRound + n: n in its low bits, |n| ≤ 128
  const float n = rounded - kRound;
  const float r = (xc - n * kLn2Hi) - n * kLn2Lo;  // n·kLn2Hi is exact
  // Horner for 2p, p = 1 + r(1 + r/2(1 + r/3(1 + ... (1 + r/7)))): every coefficient doubled, so
  // every step is the one for p times 2, exactly (doubling commutes with rounding), and 2p
  // costs no multiplication of its own.
  float p2 = 2.0f / 5040;
  p2 = p2 * r + 2.0f / 720;
  p2 = p2 * r + 2.0f / 120;
  p2 = p2 * r + 2.0f / 24;
  p2 = p2 * r + 2.0f / 6;
  p2 = p2 * r + 1.0f;
  p2 = p2 * r + 2.0f;
  p2 = p2 * r + 2.0f;
  // n reaches 128 near kExpMax, where 2ⁿ is no float: build 2^(n−1) from its bits and multiply
  // 2p by it. Both are exact scalings, so for n ≤ 127 this is p·2ⁿ to the bit. (2^(n−1)·2 first
  // would overflow to inf at n = 128: exp(88.4) came out inf.) At the low end n = −126 gives
  // 2^(n−1) the bits of 0: exp(x) is 0 below x ≈ −86.99 (so also for every x clamped to
  // kExpMin), results under 1.7e-38 flushed to zero.
  // n − 1 + 127 comes from rounded's bits, (n + kRoundBits) + (126 − kRoundBits), shifted into
  // the exponent field (the bits above it fall off): an integer add where a conversion of n and
  // an add were (unsigned, so the wrap past 2³² is defined).
  // (These rewrites give the same bits for all 2³² floats, checked against the code before
  // them: GELU's forward pass over 512 × 512 ran 141 → 126 µs, then 124 → 113 µs.)
  const std::uint32_t biased_exponent = std::bit_cast<std::uint32_t>(rounded) + (126u - kRoundBits);
  const float two_n_minus_1 = std::bit_cast<float>(biased_exponent << 23);
  return p2 * two_n_minus_1;
}

inline float exp_float(float x) {
  float y = exp_float_clamped(x);
  // Out of range and NaN, as the C library: exp(−inf) = 0 matters for masked scores, and the
  // clamp already gives 0 below the range. (Separate selects, not one ?: chain, which the
  // vectorizer sees as control flow.)
  y = x > kExpMax ? std::numeric_limits<float>::infinity() : y;
  y = x != x ? x : y;
  return y;
}

// e^x: vectorizable for float, the C library's for double.
template <typename T>
inline T exp(T x) {
  if constexpr (std::is_same_v<T, float>) return exp_float(x);
  else return std::exp(x);
}

// tanh u = 1 − 2/(e^{2u} + 1). Near 0 this subtracts nearly equal numbers: the absolute error
// stays below ~2e-7 but the relative error grows, so it serves where 1 + tanh is what counts
// (GELU), not as a general tanh. Its exp needs no inf: above the clamp e^{2u} ≈ 3.4e38 gives
// tanh u = 1 as inf would, and a NaN u gives a NaN GELU through its factor x anyway (GELU's
// forward 12% faster, the same bits for every other input).
// For float it is computed from 2u: tanh_for_gelu_of_2u serves a caller that makes 2u in one
// product (GELU's tanh_of, gelu.hpp), tanh_for_gelu doubles u itself.
inline float tanh_for_gelu_of_2u(float two_u) { return 1.0f - 2.0f / (exp_float_clamped(two_u) + 1.0f); }

template <typename T>
inline T tanh_for_gelu(T u) {
  if constexpr (std::is_same_v<T, float>) return tanh_for_gelu_of_2u(2.0f * u);
  else return std::tanh(u);
}

}  // namespace tapegrad::vec
