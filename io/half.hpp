// half.hpp — the two 16-bit float formats of Hugging Face checkpoints, to and from float32:
//
//   F16  (IEEE 754 binary16): 1 sign | 5 exponent (bias 15)  | 10 mantissa bits
//   BF16 (bfloat16):          1 sign | 8 exponent (bias 127) |  7 mantissa bits = float32's top half
//
// Every F16 and BF16 value is exactly a float32, so widening is exact. Narrowing rounds to
// nearest, ties to even (IEEE's default and what torch's .to(torch.float16/bfloat16) does):
// NaN stays NaN (quiet, sign kept), a float32 too large for F16 becomes ±Inf, and F16
// subnormals (|x| < 2^-14) are produced and read exactly. Plain integer arithmetic, no
// hardware conversion, so the result does not depend on the CPU or the compiler flags.
// Not here: arithmetic in 16 bits; tapegrad computes in float32.
#pragma once

#include <cstdint>

namespace tapegrad::io {

float f16_to_float(std::uint16_t bits);
float bf16_to_float(std::uint16_t bits);
std::uint16_t float_to_f16(float value);
std::uint16_t float_to_bf16(float value);

}  // namespace tapegrad::io
