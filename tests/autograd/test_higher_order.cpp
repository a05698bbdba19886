// test_higher_order.cpp — grad() and backward(create_graph): returned gradients that leave
// .grad() alone, non-leaf inputs, several outputs, allow_unused, retain_graph, errors by name;
// derivatives of order 2 and 3; gradients of gradients accumulating as PyTorch's; a
// Hessian-vector product of a small MLP against finite differences; an op whose backward is
// not differentiable refused by name; grad() not running the nodes below what it asks for.
#include <cmath>
#include <vector>

#include "support/gradcheck_catch.hpp"
#include "support/tensor_diff.hpp"

using namespace tapegrad;
using Catch::Contains;
using tapegrad::testing::max_abs_diff;
using tapegrad::testing::param;

namespace {

constexpr DType f64 = DType::float64;

Tensor scalar(double v) { return tensor({v}, {}, f64).requires_grad_(); }

}  // namespace

TEST_CASE("grad returns the gradients and leaves .grad() alone", "[higher_order][grad]") {
  Tensor x = scalar(3), w = scalar(2);
  const Tensor h = x * w;      // a non-leaf
  const Tensor y = h * h + x;  // dy/dx = 2hw + 1 = 25, dy/dw = 2hx = 36, dy/dh = 2h = 12
  const TensorList g = grad({y}, {x, w, h}, {}, {.retain_graph = true});
  CHECK(g[0].item() == 25);
  CHECK(g[1].item() == 36);
  CHECK(g[2].item() == 12);
  CHECK_FALSE(x.grad().defined());
  CHECK_FALSE(w.grad().defined());
  CHECK_FALSE(g[0].requires_grad());  // without create_graph the result is a constant

  SECTION("several outputs weighted by grad_outputs") {
    const Tensor z = x * 5.0;
    const TensorList gz = grad({y, z}, {x}, {tensor({2}, {}, f64), tensor({-1}, {}, f64)});
    CHECK(gz[0].item() == 2 * 25 - 5);
  }
  SECTION("an input the outputs do not use: an error, or undefined with allow_unused") {
    Tensor unused = scalar(1);
    REQUIRE_THROWS_WITH(grad({y}, {x, unused}, {}, {.retain_graph = true}), Contains("input 1") && Contains("allow_unused"));
    const TensorList gu = grad({y}, {x, unused}, {}, {.retain_graph = true, .allow_unused = true});
    CHECK(gu[0].item() == 25);
    CHECK_FALSE(gu[1].defined());
  }
  SECTION("retain_graph defaults to false: a second grad through the same graph is refused") {
    (void)grad({y}, {x});
    REQUIRE_THROWS_WITH(grad({y}, {x}), Contains("second time"));
  }
  SECTION("errors name the argument") {
    REQUIRE_THROWS_WITH(grad({y}, {tensor({1}, {}, f64)}), Contains("input 0 does not require grad"));
    REQUIRE_THROWS_WITH(grad({y}, {x}, {tensor({1}, {}, f64), tensor({1}, {}, f64)}),
                        Contains("2 grad_outputs for 1 outputs"));
    REQUIRE_THROWS_WITH(grad({mul(x, ones({2}, f64))}, {x}), Contains("implicitly only for a one-element output"));
  }
}

TEST_CASE("grad visits only the nodes on a path to what it asks for", "[higher_order][grad]") {
  // A node below h whose backward throws: grad with respect to h must not run it.
  Tensor x = scalar(2);
  Tensor below = mul(x.detach(), 1.0);
  record(below, "must_not_run", {x}, [](const Tensor&) -> TensorList { throw std::runtime_error("ran"); });
  const Tensor h = below * 3.0;
  const Tensor y = h * h;
  CHECK(grad({y}, {h}, {}, {.retain_graph = true})[0].item() == 2 * 6);
  REQUIRE_THROWS_WITH(y.backward(), Contains("ran"));
}

TEST_CASE("create_graph: derivatives of order 2 and 3", "[higher_order]") {
  Tensor x = scalar(1.5);
  const Tensor y = pow(x, 4.0);  // y' = 4x³, y'' = 12x², y''' = 24x
  const Tensor d1 = grad({y}, {x}, {}, {.create_graph = true})[0];
  CHECK(d1.requires_grad());
  CHECK(d1.item() == Approx(4 * std::pow(1.5, 3)));
  const Tensor d2 = grad({d1}, {x}, {}, {.create_graph = true})[0];
  CHECK(d2.item() == Approx(12 * 1.5 * 1.5));
  const Tensor d3 = grad({d2}, {x})[0];
  CHECK(d3.item() == Approx(24 * 1.5));

  SECTION("through the fused ops: d²/dx² of sum(softmax(x)·c) equals its formula") {
    // s = softmax(x), f = s·c: ∂f/∂x = s ⊙ (c − s·c); ∂²f/∂x_i∂x_j from that product rule
    Tensor v = param({4}, 5);
    const Tensor c = tensor({1, -2, 0.5, 3}, {4}, f64);
    const Tensor g = grad({sum(mul(softmax(v, 0), c))}, {v}, {}, {.create_graph = true})[0];
    const std::vector<double> s = softmax(v.detach(), 0).to_vector(), cv = c.to_vector();
    double sc = 0;
    for (int i = 0; i < 4; ++i) sc += s[i] * cv[i];
    for (int j = 0; j < 4; ++j) {
      const Tensor row = grad({narrow(g, 0, j, 1).sum()}, {v}, {}, {.retain_graph = true})[0];  // ∂g_j/∂v
      for (int i = 0; i < 4; ++i) {
        // g_j = s_j (c_j − sc);  ∂s_j/∂v_i = s_j([i=j] − s_i);  ∂sc/∂v_i = s_i (c_i − sc)
        const double ds_j = s[j] * ((i == j) - s[i]);
        const double expected = ds_j * (cv[j] - sc) - s[j] * s[i] * (cv[i] - sc);
        CHECK(row.to_vector()[i] == Approx(expected).margin(1e-14));
      }
    }
  }
}

TEST_CASE("backward(create_graph): .grad() keeps its graph and accumulates as PyTorch's", "[higher_order]") {
  Tensor x = scalar(2);
  pow(x, 3.0).backward(Tensor(), {.create_graph = true});  // x.grad = 3x² = 12, recorded
  REQUIRE(x.grad().requires_grad());
  CHECK(x.grad().item() == 12);
  // backward of x.grad adds d(3x²)/dx = 6x = 12 into x.grad, out of place: 12 + 12
  const Tensor first = x.grad();
  first.backward();
  CHECK(x.grad().item() == 24);
  CHECK(first.item() == 12);  // the tensor the first backward produced is not modified
}

TEST_CASE("Hessian-vector product of a small MLP agrees with finite differences of the gradient",
          "[higher_order][hvp]") {
  // L(θ) = mean((W2·tanh(W1·x + b1) + b2 − y)²);  Hv = ∂⟨∇L, v⟩/∂θ (Pearlmutter's trick:
  // one grad with create_graph, one more grad), against (∇L(θ + εv) − ∇L(θ − εv)) / 2ε.
  Generator gen(7);
  const Tensor x = randn({5, 3}, gen, f64), y = randn({5, 2}, gen, f64);
  TensorList theta = {param({4, 3}, 1), param({4}, 2), param({2, 4}, 3), param({2}, 4)};
  TensorList v;
  for (const Tensor& p : theta) v.push_back(randn(p.shape(), gen, f64));
  auto loss = [&](const TensorList& t) {
    return mse_loss(linear(tanh(linear(x, t[0], t[1])), t[2], t[3]), y);
  };
  const TensorList g = grad({loss(theta)}, theta, {}, {.create_graph = true});
  Tensor g_dot_v = sum(mul(g[0], v[0]));
  for (std::size_t i = 1; i < g.size(); ++i) g_dot_v = add(g_dot_v, sum(mul(g[i], v[i])));
  const TensorList hv = grad({g_dot_v}, theta);

  const double eps = 1e-5;
  auto shifted_grad = [&](double sign) {
    TensorList t;
    for (std::size_t i = 0; i < theta.size(); ++i) t.push_back(add(theta[i].detach(), mul(v[i], sign * eps)).requires_grad_());
    return grad({loss(t)}, t);
  };
  const TensorList plus = shifted_grad(1), minus = shifted_grad(-1);
  for (std::size_t i = 0; i < theta.size(); ++i) {
    INFO("parameter " << i);
    const Tensor fd = div(sub(plus[i], minus[i]), 2 * eps);
    CHECK(max_abs_diff(hv[i], fd) < 1e-8);
    CHECK(max_abs_diff(hv[i], zeros(hv[i].shape(), f64)) > 1e-3);  // not trivially zero
  }
}

TEST_CASE("an op whose backward is not differentiable is refused by name under create_graph",
          "[higher_order][errors]") {
  Tensor x = scalar(3);
  Tensor y = mul(x.detach(), x.detach());
  record(y, "my_square", {x}, [x](const Tensor& dout) -> TensorList { return {mul(dout, mul(x.detach(), 2.0))}; });
  const Tensor z = y * 2.0;
  CHECK(grad({z}, {x}, {}, {.retain_graph = true})[0].item() == 12);  // first order: fine
  REQUIRE_THROWS_WITH(grad({z}, {x}, {}, {.retain_graph = true, .create_graph = true}),
                      Contains("backward of 'my_square'") && Contains("create_graph") &&
                          Contains("DoubleBackward::supported"));
  REQUIRE_THROWS_AS(z.backward(Tensor(), {.retain_graph = true, .create_graph = true}), GraphError);
}

TEST_CASE("first derivatives are the same with and without create_graph", "[higher_order]") {
  // The fused kernels' fast path and their differentiable form agree.
  manual_seed(3);
  nn::TransformerLMConfig c;
  c.vocab_size = 7;
  c.max_seq_len = 5;
  c.n_layers = 2;
  c.block.d_model = 8;
  c.block.n_heads = 2;
  c.block.d_ff = 16;
  c.block.dtype = f64;
  nn::TransformerLM lm(c);
  const Tensor tokens = tensor({1, 2, 3, 4, 5, 6, 0, 1, 2, 3}, {2, 5}, DType::int64);
  const TensorList params = lm.parameters();
  auto loss = [&] { return cross_entropy(lm.forward(tokens).reshape({10, 7}), tokens.reshape({10})); };
  const TensorList fast = grad({loss()}, params);
  const TensorList recorded = grad({loss()}, params, {}, {.create_graph = true});
  for (std::size_t i = 0; i < params.size(); ++i) {
    INFO("parameter " << i);
    CHECK(max_abs_diff(fast[i], recorded[i].detach()) < 1e-14);
  }
}
