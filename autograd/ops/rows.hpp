// rows.hpp — a tensor seen as rows along one dim, for the row-wise kernels (softmax,
// log_softmax, cross_entropy): shape (outer, C, inner) around the dim of size C.
#pragma once

#include <cstdint>

namespace tapegrad {

struct RowGeometry {
  std::int64_t outer = 1, C = 1, inner = 1;
  std::int64_t rows() const { return outer * inner; }
};

// Runs body.template operator()<kContiguous>(): the row stride is then the constant 1 when the
// dim is the last one, and the compiler vectorizes the row loops (with a stride known only at
// run time it falls back to scalar code); g.inner otherwise.
template <typename Body>
void with_layout(const RowGeometry& g, Body body) {
  if (g.inner == 1) body.template operator()<true>();
  else body.template operator()<false>();
}

}  // namespace tapegrad
