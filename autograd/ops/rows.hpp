// rows.hpp — a tensor seen as rows along one dim, for the row-wise kernels (softmax,
// log_softmax, cross_entropy): its DimGeometry (outer, C, inner) around the dim of size
// C = g.size holds outer·inner rows of C elements, `inner` apart in memory.
#pragma once

#include <cstdint>

#include "../shape.hpp"

namespace tapegrad {

// The number of rows of C elements: outer · inner.
inline std::int64_t row_count(const DimGeometry& g) { return g.outer * g.inner; }

// Runs body.template operator()<kContiguous>(): the row stride is then the constant 1 when the
// dim is the last one, and the compiler vectorizes the row loops (with a stride known only at
// run time it falls back to scalar code); g.inner otherwise.
template <typename Body>
void with_layout(const DimGeometry& g, Body body) {
  if (g.inner == 1) body.template operator()<true>();
  else body.template operator()<false>();
}

}  // namespace tapegrad
