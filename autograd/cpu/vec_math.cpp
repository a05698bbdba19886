// vec_math.cpp — the clamp bounds of vec::exp_float_clamped, defined here so that the loops
// calling it, compiled elsewhere, cannot see their values (vec_math.hpp says why that matters).
#include "vec_math.hpp"

namespace tapegrad::vec::detail {

const float kExpClampLow = kExpMin;
const float kExpClampHigh = kExpMax;

}  // namespace tapegrad::vec::detail
