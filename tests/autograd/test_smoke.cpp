#include <catch2/catch.hpp>
#include <tapegrad/tapegrad.hpp>
using namespace tapegrad;
TEST_CASE("smoke") {
  Tensor a = tensor({1, 2, 3}, {3}, DType::float64).requires_grad_();
  Tensor b = tensor({4, 5, 6}, {3}, DType::float64).requires_grad_();
  Tensor y = (a * b + a).sum();
  y.backward();
  CHECK(y.item() == 38);
  CHECK(a.grad().to_vector() == std::vector<double>{5, 6, 7});
}
