// compare.cpp — ops whose outputs have no gradient: the comparisons, and topk's indices (its
// values are a gather, differentiable: gather.cpp; argmax is max's index, reduce.cpp).
//   eq ne lt le gt ge:  out = (a op b) ? 1 : 0, int64, with NumPy broadcasting
//   topk(x, k, d):      the k largest (or smallest) along d, largest first, ties by index
// tapegrad has no bool dtype: a comparison gives int64 0/1 where PyTorch gives bool. It sums
// to a count, masks masked_fill and where (nonzero = true), and converts with .to(dtype).
// Their outputs never require grad, whatever their inputs, as in PyTorch.
#include <algorithm>
#include <cmath>
#include <functional>
#include <numeric>
#include <string>
#include <utility>
#include <vector>

#include "../grad_mode.hpp"
#include "../ops.hpp"
#include "../shape.hpp"

namespace tapegrad {

namespace {

template <typename Pred>
Tensor compare(const char* op, const Tensor& a, const Tensor& b, Pred pred) {
  const Shape shape = broadcast_shapes(a.shape(), b.shape(), op);
  NoGradGuard no_grad;
  const std::vector<double> x = expand(a.detach(), shape).contiguous().to_vector<double>();
  const std::vector<double> y = expand(b.detach(), shape).contiguous().to_vector<double>();
  std::vector<double> out(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) out[i] = pred(x[i], y[i]) ? 1.0 : 0.0;
  return tensor(out, shape, DType::int64);
}

Tensor scalar_like(const Tensor& a, double b) { return scalar_tensor(b, a.dtype() == DType::int64 ? DType::float64 : a.dtype()); }

}  // namespace

Tensor eq(const Tensor& a, const Tensor& b) { return compare("eq", a, b, std::equal_to<double>()); }
Tensor ne(const Tensor& a, const Tensor& b) { return compare("ne", a, b, std::not_equal_to<double>()); }
Tensor lt(const Tensor& a, const Tensor& b) { return compare("lt", a, b, std::less<double>()); }
Tensor le(const Tensor& a, const Tensor& b) { return compare("le", a, b, std::less_equal<double>()); }
Tensor gt(const Tensor& a, const Tensor& b) { return compare("gt", a, b, std::greater<double>()); }
Tensor ge(const Tensor& a, const Tensor& b) { return compare("ge", a, b, std::greater_equal<double>()); }
Tensor eq(const Tensor& a, double b) { return eq(a, scalar_like(a, b)); }
Tensor ne(const Tensor& a, double b) { return ne(a, scalar_like(a, b)); }
Tensor lt(const Tensor& a, double b) { return lt(a, scalar_like(a, b)); }
Tensor le(const Tensor& a, double b) { return le(a, scalar_like(a, b)); }
Tensor gt(const Tensor& a, double b) { return gt(a, scalar_like(a, b)); }
Tensor ge(const Tensor& a, double b) { return ge(a, scalar_like(a, b)); }

std::pair<Tensor, Tensor> topk(const Tensor& x, std::int64_t k, std::int64_t dim, bool largest) {
  if (x.dim() == 0) throw ShapeError("topk: x must have at least one dim, got a 0-d tensor");
  const std::int64_t d = normalize_dim(dim, x.dim(), "topk");
  const DimGeometry g = dim_geometry(x.shape(), d);
  if (k < 0 || k > g.size)
    throw ValueError("topk: k = " + std::to_string(k) + " is out of range for dim " + std::to_string(d) + " of size " +
                     std::to_string(g.size) + " (shape " + shape_str(x.shape()) + ")");
  const std::vector<double> v = x.detach().contiguous().to_vector<double>();
  std::vector<double> picked(static_cast<std::size_t>(g.outer * k * g.inner));
  std::vector<std::int64_t> order(static_cast<std::size_t>(g.size));
  for (std::int64_t o = 0; o < g.outer; ++o)
    for (std::int64_t i = 0; i < g.inner; ++i) {
      const auto at = [&](std::int64_t j) { return v[static_cast<std::size_t>((o * g.size + j) * g.inner + i)]; };
      // a NaN counts as the largest (first when largest, last otherwise); ties keep index order
      const auto greater = [](double a, double b) { return std::isnan(a) ? !std::isnan(b) : !std::isnan(b) && a > b; };
      const auto before = [&](std::int64_t p, std::int64_t q) { return largest ? greater(at(p), at(q)) : greater(at(q), at(p)); };
      std::iota(order.begin(), order.end(), 0);
      std::stable_sort(order.begin(), order.end(), before);
      for (std::int64_t r = 0; r < k; ++r)
        picked[static_cast<std::size_t>((o * k + r) * g.inner + i)] = static_cast<double>(order[static_cast<std::size_t>(r)]);
    }
  Shape shape = x.shape();
  shape[static_cast<std::size_t>(d)] = k;
  const Tensor indices = tensor(picked, shape, DType::int64);
  return {gather(x, d, indices), indices};
}

}  // namespace tapegrad
