// one_hot.cpp — exercise 8's given part: the targets as a (N, C) mask, 1 at each row's target.
#include "08_cross_entropy/exercise.hpp"

#include <string>

namespace learn {

using namespace tapegrad;

Tensor one_hot(const Tensor& targets, std::int64_t classes) {
  if (targets.dtype() != DType::int64 || targets.dim() != 1)
    throw ValueError("one_hot: the targets must be int64 of shape (N), not " + shape_str(targets.shape()));
  const std::vector<std::int64_t> t = targets.contiguous().to_vector<std::int64_t>();
  Tensor out = zeros({targets.shape()[0], classes}, DType::float64);
  double* mask = out.data<double>();
  for (std::size_t n = 0; n < t.size(); ++n) {
    if (t[n] < 0 || t[n] >= classes)
      throw ValueError("one_hot: target " + std::to_string(t[n]) + " of row " + std::to_string(n) +
                       " is not a class in [0, " + std::to_string(classes) + ")");
    mask[static_cast<std::int64_t>(n) * classes + t[n]] = 1;
  }
  return out;
}

}  // namespace learn
