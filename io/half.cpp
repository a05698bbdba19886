// half.cpp — F16/BF16 <-> float32 by bit manipulation (see half.hpp for the rounding rules).
#include "half.hpp"

#include <bit>

namespace tapegrad::io {

float bf16_to_float(std::uint16_t bits) { return std::bit_cast<float>(static_cast<std::uint32_t>(bits) << 16); }

std::uint16_t float_to_bf16(float value) {
  const std::uint32_t u = std::bit_cast<std::uint32_t>(value);
  if ((u & 0x7fffffffu) > 0x7f800000u) {  // NaN: truncate (keeps sign and payload, so every BF16
    std::uint32_t hi = u >> 16;            // NaN round-trips); a payload only in the dropped bits
    if ((hi & 0x7fu) == 0) hi |= 0x40u;    // would read as Inf, so set the quiet bit then
    return static_cast<std::uint16_t>(hi);
  }
  // Round to nearest even on the 16 dropped bits: add 0x7fff plus the lowest kept bit.
  // A carry out of the mantissa bumps the exponent, which is right (up to Inf).
  const std::uint32_t lsb = (u >> 16) & 1u;
  return static_cast<std::uint16_t>((u + 0x7fffu + lsb) >> 16);
}

float f16_to_float(std::uint16_t bits) {
  const std::uint32_t sign = static_cast<std::uint32_t>(bits & 0x8000u) << 16;
  const std::uint32_t exp = (bits >> 10) & 0x1fu;
  std::uint32_t mant = bits & 0x3ffu;
  if (exp == 0x1f) return std::bit_cast<float>(sign | 0x7f800000u | (mant << 13));  // Inf, NaN (payload kept)
  if (exp != 0) return std::bit_cast<float>(sign | ((exp + 127 - 15) << 23) | (mant << 13));
  if (mant == 0) return std::bit_cast<float>(sign);  // ±0
  // Subnormal: mant · 2^-24. Normalise: shift until the implicit bit (bit 10) is set.
  std::uint32_t e = 127 - 15 + 1;
  while ((mant & 0x400u) == 0) {
    mant <<= 1;
    --e;
  }
  return std::bit_cast<float>(sign | (e << 23) | ((mant & 0x3ffu) << 13));
}

std::uint16_t float_to_f16(float value) {
  const std::uint32_t u = std::bit_cast<std::uint32_t>(value);
  const std::uint16_t sign = static_cast<std::uint16_t>((u >> 16) & 0x8000u);
  const std::uint32_t a = u & 0x7fffffffu;
  if (a > 0x7f800000u) {  // NaN: keep the payload's top bits (every F16 NaN round-trips), never Inf
    const std::uint32_t payload = (a >> 13) & 0x3ffu;
    return static_cast<std::uint16_t>(sign | 0x7c00u | (payload != 0 ? payload : 0x200u));
  }
  if (a >= 0x477ff000u) return static_cast<std::uint16_t>(sign | 0x7c00u);  // >= 65520 rounds to Inf (and Inf)
  if (a >= 0x38800000u) {  // normal in F16 (>= 2^-14): rebias, round away 13 bits to nearest even
    const std::uint32_t rebased = a - ((127u - 15u) << 23);
    const std::uint32_t lsb = (rebased >> 13) & 1u;
    return static_cast<std::uint16_t>(sign | ((rebased + 0xfffu + lsb) >> 13));
  }
  if (a < 0x33000000u) return sign;  // < 2^-25: rounds to ±0 (2^-25 itself is a tie to even 0)
  // Subnormal in F16: value = m · 2^-24 with m = full mantissa (with implicit 1) shifted right.
  const std::uint32_t exp = a >> 23;                  // 102 .. 112
  const std::uint32_t mant = (a & 0x7fffffu) | 0x800000u;  // 24 significant bits
  const std::uint32_t shift = 126 - exp;              // 14 .. 24: bits dropped = 13 + (113 - exp)
  const std::uint32_t kept = mant >> shift;
  const std::uint32_t rest = mant & ((1u << shift) - 1u);
  const std::uint32_t half = 1u << (shift - 1);
  const std::uint32_t rounded = kept + ((rest > half || (rest == half && (kept & 1u))) ? 1u : 0u);
  return static_cast<std::uint16_t>(sign | rounded);  // a carry into bit 10 gives the smallest normal
}

}  // namespace tapegrad::io
