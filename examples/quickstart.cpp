// examples/quickstart.cpp — the README example: a few tensor ops, then backward.
#include <tapegrad/tapegrad.hpp>
#include <iostream>
using namespace tapegrad;

int main() {
  Tensor x = tensor({1, 2, 3, 4}, {2, 2}).requires_grad_();  // (2, 2)
  Tensor w = tensor({0.5, -1}, {2, 1}).requires_grad_();     // (2, 1)
  Tensor y = tanh(matmul(x, w));                             // (2, 1)
  Tensor loss = (y * y).sum();                               // Σ tanh(x·w)²
  loss.backward();
  std::cout << loss.item() << "\n";  // 1.7927
  std::cout << w.grad() << "\n";     // [[-0.4846], [-0.8642]]
  std::cout << x.grad() << "\n";     // [[-0.1636, 0.3271], [-0.0262, 0.0525]]
}
