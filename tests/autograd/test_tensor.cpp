// test_tensor.cpp — factories, accessors, views sharing storage, strides, printing, random.
#include <cmath>
#include <sstream>

#include <catch2/catch.hpp>
#include <tapegrad/tapegrad.hpp>

using namespace tapegrad;
using Catch::Contains;

TEST_CASE("factories fill shape, dtype and values", "[tensor]") {
  Tensor z = zeros({2, 3});
  CHECK(z.shape() == Shape{2, 3});
  CHECK(z.dim() == 2);
  CHECK(z.numel() == 6);
  CHECK(z.dtype() == DType::float32);
  CHECK(z.to_vector() == std::vector<double>(6, 0.0));
  CHECK(ones({2}, DType::float64).to_vector() == std::vector<double>{1, 1});
  CHECK(full({3}, 2.5).to_vector() == std::vector<double>{2.5, 2.5, 2.5});
  CHECK(arange(5).to_vector() == std::vector<double>{0, 1, 2, 3, 4});
  CHECK(arange(1, 2, 0.25, DType::float64).to_vector() == std::vector<double>{1, 1.25, 1.5, 1.75});
  CHECK(arange(3, 0, -1, DType::int64).to_vector<std::int64_t>() == std::vector<std::int64_t>{3, 2, 1});
  Tensor t = tensor({1, 2, 3, 4}, {2, 2}, DType::float64);
  CHECK(t.data<double>()[3] == 4);
  CHECK(Tensor::from_vector<float>({1.5f, 2.5f}, {2}).to_vector<float>() == std::vector<float>{1.5f, 2.5f});
  CHECK(scalar_tensor(7).dim() == 0);
  CHECK(scalar_tensor(7).item() == 7);
  CHECK(zeros({0, 3}).numel() == 0);
}

TEST_CASE("factories reject bad arguments", "[tensor][errors]") {
  REQUIRE_THROWS_WITH(tensor({1, 2, 3}, {2, 2}), Contains("3 values do not fill shape [2, 2]"));
  REQUIRE_THROWS_AS(zeros({-1}), ShapeError);
  REQUIRE_THROWS_AS(arange(0, 1, 0), ValueError);
  REQUIRE_THROWS_WITH(zeros({2}).item(), Contains("item") && Contains("[2]"));
  REQUIRE_THROWS_WITH(zeros({2}).data<double>(), Contains("float32"));
  REQUIRE_THROWS_WITH(Tensor().shape(), Contains("undefined tensor"));
}

TEST_CASE("copying a Tensor aliases the data", "[tensor]") {
  Tensor a = zeros({3});
  Tensor b = a;
  b.data<float>()[1] = 5;
  CHECK(a.to_vector()[1] == 5);
  CHECK(a.is_same(b));
  Tensor c = a.clone();
  c.data<float>()[1] = 7;
  CHECK(a.to_vector()[1] == 5);
}

TEST_CASE("views share storage and keep their own strides", "[tensor][view]") {
  Tensor x = arange(6, DType::float64).reshape({2, 3});
  CHECK(x.is_contiguous());
  Tensor xt = x.transpose(0, 1);
  CHECK(xt.shape() == Shape{3, 2});
  CHECK(xt.strides() == Shape{1, 3});
  CHECK_FALSE(xt.is_contiguous());
  CHECK(xt.to_vector() == std::vector<double>{0, 3, 1, 4, 2, 5});
  x.data<double>()[1] = 10;  // visible through the view
  CHECK(xt.to_vector()[2] == 10);
  Tensor row = narrow(x, 0, 1, 1);
  CHECK(row.storage_offset() == 3);
  CHECK(row.to_vector() == std::vector<double>{3, 4, 5});
  Tensor col = slice(x, 1, 0, 3, 2);
  CHECK(col.to_vector() == std::vector<double>{0, 2, 3, 5});
  CHECK(xt.contiguous().is_contiguous());
  CHECK(xt.contiguous().to_vector() == xt.to_vector());
  CHECK(expand(tensor({1, 2}, {2, 1}), {2, 3}).to_vector() == std::vector<double>{1, 1, 1, 2, 2, 2});
  REQUIRE_THROWS_WITH(xt.view({6}), Contains("not contiguous") && Contains("reshape()"));
  CHECK(xt.reshape({6}).to_vector() == xt.to_vector());
  REQUIRE_THROWS_WITH(x.reshape({4, -1}), Contains("reshape: shape [4, -1] is invalid for input of shape [2, 3]"));
  REQUIRE_THROWS_WITH(x.permute({0, 0}), Contains("repeated"));
  REQUIRE_THROWS_WITH(x.transpose(0, 2), Contains("dim 2 is out of range for a 2-d tensor"));
}

TEST_CASE("copy_, fill_ and dtype conversion", "[tensor]") {
  Tensor a = zeros({2, 2}, DType::float64);
  a.copy_(tensor({1, 2, 3, 4}, {2, 2}).transpose(0, 1));
  CHECK(a.to_vector() == std::vector<double>{1, 3, 2, 4});
  a.fill_(-1);
  CHECK(a.to_vector() == std::vector<double>(4, -1));
  Tensor f = tensor({1.5, -2}, {2}, DType::float64).to(DType::float32);
  CHECK(f.dtype() == DType::float32);
  CHECK(f.to_vector() == std::vector<double>{1.5, -2});
  Tensor x = ones({2}, DType::float64).requires_grad_();
  Tensor y = (x.to(DType::float32) * 3.0).sum();
  y.backward();
  CHECK(x.grad().dtype() == DType::float64);
  CHECK(x.grad().to_vector() == std::vector<double>{3, 3});
}

TEST_CASE("printing a tensor gives PyTorch's text, character for character", "[tensor]") {
  // Each expected string is what torch 1.13 prints for the same tensor (str(t)).
  const auto text = [](const Tensor& t) {
    std::ostringstream os;
    os << t;
    return os.str();
  };
  CHECK(text(tensor({1, -2.5, 3, 4.25, 0.5, 6}, {2, 3}, DType::float64).requires_grad_()) ==
        "tensor([[ 1.0000, -2.5000,  3.0000],\n        [ 4.2500,  0.5000,  6.0000]], dtype=torch.float64, requires_grad=True)");
  // magnitudes more than 1000 apart: scientific
  CHECK(text(tensor({1, -2.5, 3, 4.25, 0.001, 6}, {2, 3})) ==
        "tensor([[ 1.0000e+00, -2.5000e+00,  3.0000e+00],\n        [ 4.2500e+00,  1.0000e-03,  6.0000e+00]])");
  CHECK(text(scalar_tensor(2.5)) == "tensor(2.5000)");
  CHECK(text(arange(8).reshape({2, 2, 2})) ==
        "tensor([[[0., 1.],\n         [2., 3.]],\n\n        [[4., 5.],\n         [6., 7.]]])");
  CHECK(text(tensor({1e-6, 1e9}, {2})) == "tensor([1.0000e-06, 1.0000e+09])");
  CHECK(text(tensor({NAN, 1.5, -INFINITY}, {3})) == "tensor([   nan, 1.5000,   -inf])");
  CHECK(text(zeros({2000})) == "tensor([0., 0., 0.,  ..., 0., 0., 0.])");
  CHECK(text(zeros({0, 3})) == "tensor([], size=(0, 3))");
  CHECK(text(zeros({0})) == "tensor([])");
  CHECK(text(tensor({1e8, 1}, {2})) == "tensor([1.0000e+08, 1.0000e+00])");
  CHECK(text(tensor({-1, 20, 300}, {3}, DType::int64)) == "tensor([ -1,  20, 300])");
  // the grad_fn is the tape node's name
  CHECK(text(tensor({1, 2}, {2}).requires_grad_() * 2.0) == "tensor([2., 4.], grad_fn=<mul>)");
  CHECK(text(Tensor()) == "tensor(undefined)");
}

TEST_CASE("random tensors are reproducible from a seed", "[tensor][random]") {
  Generator g1(42), g2(42), g3(43);
  CHECK(randn({5}, g1).to_vector() == randn({5}, g2).to_vector());
  CHECK(randn({5}, g1).to_vector() != randn({5}, g3).to_vector());
  manual_seed(3);
  const auto first = rand({4}).to_vector();
  manual_seed(3);
  CHECK(rand({4}).to_vector() == first);
  for (double v : first) CHECK((v >= 0 && v < 1));
  // Saving and restoring the state continues the same stream.
  Generator g(9);
  (void)randn({3}, g);
  const GeneratorState state = g.get_state();
  const auto next = randn({3}, g).to_vector();
  g.set_state(state);
  CHECK(randn({3}, g).to_vector() == next);
  // Moments of a large sample.
  Generator big(1);
  const std::vector<double> v = randn({20000}, big, DType::float64).to_vector();
  double mean = 0, sq = 0;
  for (double x : v) mean += x / v.size();
  for (double x : v) sq += (x - mean) * (x - mean) / v.size();
  CHECK(std::abs(mean) < 0.03);
  CHECK(std::abs(sq - 1) < 0.05);
  const auto ints = randint(-2, 3, {1000}, big).to_vector<std::int64_t>();
  for (auto i : ints) CHECK((i >= -2 && i < 3));
  REQUIRE_THROWS_AS(randint(3, 3, {1}, big), ValueError);
}
