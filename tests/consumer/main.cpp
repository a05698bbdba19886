// main.cpp — uses an installed tapegrad: y = sum(w · x + w²) for w = (1, 2, 3), x = (4, 5, 6).
// dy/dw = x + 2w = (6, 9, 12). Exits non-zero if the value or the gradient is wrong.
#include <tapegrad/tapegrad.hpp>

#include <cstdio>
#include <vector>

int main() {
  using namespace tapegrad;
  Tensor w = tensor({1, 2, 3}, {3}, DType::float64).requires_grad_();
  Tensor x = tensor({4, 5, 6}, {3}, DType::float64);
  Tensor y = (w * x + w * w).sum();
  y.backward();

  const std::vector<double> dw = w.grad().to_vector();
  std::printf("y = %g, dy/dw = (%g, %g, %g)\n", y.item(), dw[0], dw[1], dw[2]);
  const bool ok = y.item() == 46.0 && dw == std::vector<double>{6, 9, 12};
  if (!ok) std::printf("expected y = 46, dy/dw = (6, 9, 12)\n");
  return ok ? 0 : 1;
}
