// test_tensor_methods.cpp — PyTorch's Tensor methods (tensor_methods.cpp): each gives what the
// function of the same name gives, and x[i] is row i, a view, with a message when out of range.
#include <catch2/catch.hpp>

#include <tapegrad/tapegrad.hpp>

using namespace tapegrad;
using Catch::Matchers::Contains;

TEST_CASE("indexing by operator brackets gives row i, a view, and a negative i counts from the end", "[tensor][methods]") {
  Tensor x = arange(6).reshape({2, 3});
  CHECK(x[1].to_vector() == std::vector<double>{3, 4, 5});
  CHECK(x[-2].to_vector() == std::vector<double>{0, 1, 2});
  CHECK(x[1][2].item() == 5);
  CHECK(x[1][2].dim() == 0);
  x[0].fill_(7);  // a view: writes reach x
  CHECK(x.to_vector() == std::vector<double>{7, 7, 7, 3, 4, 5});
  CHECK(x.select(1, -1).to_vector() == std::vector<double>{7, 5});
  CHECK(x.slice(1, 1, 3).to_vector() == std::vector<double>{7, 7, 4, 5});
  CHECK_THROWS_WITH(x[2], Contains("select: index 2 is out of range for dim 0 of size 2 (shape [2, 3])"));
  CHECK_THROWS_WITH(scalar_tensor(1)[0], Contains("a 0-d tensor has no dim to index"));
  // and it is differentiable: the gradient lands in row 1
  const Tensor w = tensor({1, 2, 3, 4}, {2, 2}, DType::float64).requires_grad_();
  w[1].sum().backward();
  CHECK(w.grad().to_vector() == std::vector<double>{0, 0, 1, 1});
}

TEST_CASE("each tensor method equals the function of its name", "[tensor][methods]") {
  Generator gen(3);
  const Tensor x = randn({2, 3}, gen, DType::float64);
  const Tensor p = add(abs(x), 0.5);
  const auto same = [](const Tensor& a, const Tensor& b) { return a.shape() == b.shape() && a.to_vector() == b.to_vector(); };
  CHECK(same(x.relu(), relu(x)));
  CHECK(same(x.gelu(), gelu(x)));
  CHECK(same(x.silu(), silu(x)));
  CHECK(same(x.tanh(), tanh(x)));
  CHECK(same(x.sigmoid(), sigmoid(x)));
  CHECK(same(x.exp(), exp(x)));
  CHECK(same(p.log(), log(p)));
  CHECK(same(p.sqrt(), sqrt(p)));
  CHECK(same(p.rsqrt(), rsqrt(p)));
  CHECK(same(x.abs(), abs(x)));
  CHECK(same(x.neg(), neg(x)));
  CHECK(same(p.pow(1.5), pow(p, 1.5)));
  CHECK(same(x.softmax(-1), softmax(x, -1)));
  CHECK(same(x.log_softmax(0), log_softmax(x, 0)));
  CHECK(same(x.sum({1}, true), sum(x, {1}, true)));
  CHECK(same(x.mean({0}), mean(x, {0})));
  CHECK(same(x.flatten(), flatten(x)));
  CHECK(same(x.unsqueeze(1), unsqueeze(x, 1)));
  CHECK(same(x.unsqueeze(0).squeeze(0), x));
  CHECK(same(x.narrow(1, 1, 2), narrow(x, 1, 1, 2)));
  CHECK(same(x.argmax(1), argmax(x, 1)));
  CHECK(same(x.gt(p), gt(x, p)));
  CHECK(same(x.ge(p), ge(x, p)));
  CHECK(same(x.lt(p), lt(x, p)));
  CHECK(same(x.le(p), le(x, p)));
  CHECK(same(x.ne(p), ne(x, p)));
}
