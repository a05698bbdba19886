// metrics.cpp — accuracy (metrics.hpp).
#include "metrics.hpp"

#include "../autograd/errors.hpp"
#include "../autograd/ops.hpp"

namespace tapegrad::nn {

double accuracy(const Tensor& logits, const Tensor& targets, std::int64_t ignore_index) {
  if (logits.dim() < 1) throw ShapeError("accuracy: logits must have a class dim, got a 0-d tensor");
  if (targets.dtype() != DType::int64)
    throw DTypeError(std::string("accuracy: targets must be int64 class indices, got ") + dtype_name(targets.dtype()));
  Shape rows = logits.shape();
  rows.pop_back();
  if (targets.shape() != rows)
    throw ShapeError("accuracy: logits " + shape_str(logits.shape()) + " need targets of shape " + shape_str(rows) + ", got " +
                     shape_str(targets.shape()));
  const std::vector<std::int64_t> predicted = argmax(logits.detach(), -1).to_vector<std::int64_t>();
  const std::vector<std::int64_t> wanted = targets.to_vector<std::int64_t>();
  std::int64_t counted = 0, right = 0;
  for (std::size_t i = 0; i < wanted.size(); ++i) {
    if (wanted[i] == ignore_index) continue;
    ++counted;
    right += predicted[i] == wanted[i];
  }
  if (counted == 0) throw ValueError("accuracy: every target is ignore_index (" + std::to_string(ignore_index) + ")");
  return static_cast<double>(right) / static_cast<double>(counted);
}

}  // namespace tapegrad::nn
