// test_compare.cpp — the ops without a gradient (ops/compare.cpp) and gather / scatter_add
// (ops/gather.cpp): their values against what PyTorch gives for the same inputs, their int64
// outputs, that nothing of theirs requires grad, and their refusals by message. The gradients of
// gather, scatter_add and topk's values are in the op catalogue (test_op_catalog.cpp).
#include <catch2/catch.hpp>

#include <cmath>
#include <vector>

#include <tapegrad/tapegrad.hpp>

using namespace tapegrad;
using Catch::Matchers::Contains;

namespace {
std::vector<std::int64_t> ints(const Tensor& t) { return t.to_vector<std::int64_t>(); }
}  // namespace

TEST_CASE("comparisons broadcast and give int64 0/1 that never requires grad", "[compare]") {
  const Tensor a = tensor({1, 2, 3, 4, 5, 6}, {2, 3}).requires_grad_();
  const Tensor b = tensor({2, 2, 7}, {3});
  const Tensor e = eq(a, b);
  CHECK(e.dtype() == DType::int64);
  CHECK(e.shape() == Shape{2, 3});
  CHECK_FALSE(e.requires_grad());
  CHECK(ints(e) == std::vector<std::int64_t>{0, 1, 0, 0, 0, 0});
  CHECK(ints(ne(a, b)) == std::vector<std::int64_t>{1, 0, 1, 1, 1, 1});
  CHECK(ints(lt(a, b)) == std::vector<std::int64_t>{1, 0, 1, 0, 0, 1});
  CHECK(ints(le(a, b)) == std::vector<std::int64_t>{1, 1, 1, 0, 0, 1});
  CHECK(ints(gt(a, b)) == std::vector<std::int64_t>{0, 0, 0, 1, 1, 0});
  CHECK(ints(ge(a, b)) == std::vector<std::int64_t>{0, 1, 0, 1, 1, 0});
  CHECK(ints(gt(a, 3.5)) == std::vector<std::int64_t>{0, 0, 0, 1, 1, 1});
  CHECK(ints(a.eq(b)) == ints(e));
  // a comparison with NaN is false, but for ne (IEEE, as PyTorch)
  const Tensor n = tensor({NAN, 1}, {2});
  CHECK(ints(eq(n, n)) == std::vector<std::int64_t>{0, 1});
  CHECK(ints(ne(n, n)) == std::vector<std::int64_t>{1, 0});
  // integers compare exactly, and the count is a sum
  const Tensor labels = tensor({0, 2, 1, 2}, {4}, DType::int64);
  CHECK(sum(eq(labels, 2.0)).item() == 2);
  CHECK_THROWS_WITH(eq(a, tensor({1, 2}, {2})), Contains("eq") && Contains("[2, 3]") && Contains("[2]"));
}

TEST_CASE("argmax of a flattened tensor, and per dim as a method", "[compare]") {
  const Tensor x = tensor({0.5, 3, -1, 3, 2, 0}, {2, 3});
  CHECK(argmax(x).item() == 1);  // the first of two maxima, as PyTorch
  CHECK(argmax(x).dim() == 0);
  CHECK(ints(x.argmax(1)) == std::vector<std::int64_t>{1, 0});
  CHECK(x.argmax(0, true).shape() == Shape{1, 3});
}

TEST_CASE("topk: the k largest or smallest in order, with their indices, as torch.topk", "[compare]") {
  // torch.topk(torch.tensor([[1., 5., 3., 5., 0.], [2., -1., 4., 4., 9.]]), 3) gives
  // values [[5, 5, 3], [9, 4, 4]], indices [[1, 3, 2], [4, 2, 3]]
  const Tensor x = tensor({1, 5, 3, 5, 0, 2, -1, 4, 4, 9}, {2, 5});
  const auto [values, indices] = topk(x, 3);
  CHECK(values.to_vector() == std::vector<double>{5, 5, 3, 9, 4, 4});
  CHECK(ints(indices) == std::vector<std::int64_t>{1, 3, 2, 4, 2, 3});
  const auto [low, low_at] = topk(x, 2, 1, false);
  CHECK(low.to_vector() == std::vector<double>{0, 1, -1, 2});
  CHECK(ints(low_at) == std::vector<std::int64_t>{4, 0, 1, 0});
  // a NaN counts as the largest
  const auto [top, top_at] = topk(tensor({1, NAN, 2}, {3}), 1);
  CHECK(ints(top_at) == std::vector<std::int64_t>{1});
  // the values carry the gradient to where they came from
  const Tensor w = tensor({1, 5, 3}, {3}, DType::float64).requires_grad_();
  sum(topk(w, 2).first).backward();
  CHECK(w.grad().to_vector() == std::vector<double>{0, 1, 1});
  CHECK_THROWS_WITH(topk(x, 6), Contains("topk: k = 6 is out of range for dim 1 of size 5 (shape [2, 5])"));
}

TEST_CASE("gather and scatter_add pick and place along a dim, as torch.gather and torch.scatter_add", "[compare]") {
  const Tensor x = tensor({1, 2, 3, 4, 5, 6}, {2, 3});
  const Tensor index = tensor({2, 0, 1, 1}, {2, 2}, DType::int64);
  CHECK(gather(x, 1, index).to_vector() == std::vector<double>{3, 1, 5, 5});
  const Tensor placed = scatter_add(zeros({2, 3}), 1, index, tensor({10, 20, 30, 40}, {2, 2}));
  CHECK(placed.to_vector() == std::vector<double>{20, 0, 10, 0, 70, 0});
  CHECK_THROWS_WITH(gather(x, 1, tensor({3}, {1, 1}, DType::int64)),
                    Contains("gather: index 3 at [0, 0] is out of range for dim 1 of size 3"));
  CHECK_THROWS_WITH(gather(x, 1, tensor({0}, {1}, DType::int64)), Contains("must have as many dims as x [2, 3]"));
  CHECK_THROWS_WITH(gather(x, 1, tensor({0, 0, 0}, {3, 1}, DType::int64)),
                    Contains("is larger than x [2, 3] in dim 0 (only dim 1 may differ)"));
  CHECK_THROWS_WITH(scatter_add(zeros({2, 3}), 1, index, zeros({2, 3})), Contains("src [2, 3] must have index's shape [2, 2]"));
}
