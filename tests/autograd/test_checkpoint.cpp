// test_checkpoint.cpp — activation checkpointing (autograd/checkpoint.hpp): gradients
// bitwise equal to the plain computation's (dropout included: the recomputation draws the same
// masks, and the generator continues as if the function had run once); inputs that do not
// require grad, parameters inside the function, nothing requiring grad, NoGradGuard, nesting;
// the forward keeps none of the function's intermediates.
#include <catch2/catch.hpp>
#include <tapegrad/tapegrad.hpp>

using namespace tapegrad;
using Catch::Contains;

namespace {

constexpr DType f64 = DType::float64;

bool same(const Tensor& a, const Tensor& b) {
  return a.defined() && b.defined() && a.shape() == b.shape() && a.to_vector() == b.to_vector();
}

// A function with dropout and a parameter: tanh(x·W) with dropout, times 2, then a sum over rows.
struct Net {
  Tensor w;
  explicit Net(DType dtype) {
    Generator g(3);
    w = randn({4, 5}, g, dtype).requires_grad_();
  }
  Tensor operator()(const TensorList& in) const { return dropout(tanh(matmul(in[0], w)), 0.3, true) * 2.0; }
};

}  // namespace

TEST_CASE("checkpoint: the same gradients, dropout masks and generator stream as the plain computation", "[checkpoint]") {
  for (DType dtype : {DType::float32, DType::float64}) {
    INFO(dtype_name(dtype));
    auto run = [&](bool checkpointed) {
      Net net(dtype);
      Generator g(5);
      Tensor x = randn({3, 4}, g, dtype).requires_grad_();
      manual_seed(11);
      Tensor y = checkpointed ? checkpoint(net, {x}) : net({x});
      Tensor loss = sum(y * y);
      loss.backward();
      const double next = default_generator().next_double();  // where the stream is afterwards
      return std::tuple{loss.item(), x.grad(), net.w.grad(), next};
    };
    const auto [loss_a, dx_a, dw_a, next_a] = run(false);
    const auto [loss_b, dx_b, dw_b, next_b] = run(true);
    CHECK(loss_a == loss_b);
    CHECK(same(dx_a, dx_b));
    CHECK(same(dw_a, dw_b));
    CHECK(next_a == next_b);
  }
}

TEST_CASE("checkpoint: inputs without grad, parameters inside, constants, NoGradGuard, nesting", "[checkpoint]") {
  Net net(f64);
  const Tensor x = tensor({1, 2, 3, 4, 5, 6, 7, 8}, {2, 4}, f64);  // no grad
  manual_seed(1);
  Tensor y = checkpoint(net, {x});
  CHECK(y.requires_grad());  // W inside does
  CHECK(y.grad_fn()->name == "checkpoint");
  sum(y).backward();
  REQUIRE(net.w.grad().defined());
  Tensor dw = net.w.grad().clone();
  net.w.reset_grad();
  manual_seed(1);
  sum(net({x})).backward();
  CHECK(same(net.w.grad(), dw));

  // nothing requires grad: a constant
  const Tensor c = checkpoint([](const TensorList& in) { return exp(in[0]); }, {x});
  CHECK(!c.requires_grad());
  // under NoGradGuard the function simply runs
  Tensor xg = x.detach().clone().requires_grad_();
  {
    NoGradGuard no_grad;
    CHECK(!checkpoint(net, {xg}).requires_grad());
  }
  // nested: a checkpoint inside a checkpoint gives the same gradients
  const CheckpointFn inner = [&](const TensorList& in) { return tanh(matmul(in[0], net.w)); };
  const CheckpointFn outer = [&](const TensorList& in) { return checkpoint(inner, {in[0] * 3.0}) * 2.0; };
  net.w.reset_grad();
  sum(checkpoint(outer, {xg})).backward();
  const Tensor dx_nested = xg.grad().clone(), dw_nested = net.w.grad().clone();
  xg.reset_grad();
  net.w.reset_grad();
  sum(tanh(matmul(xg * 3.0, net.w)) * 2.0).backward();
  CHECK(same(xg.grad(), dx_nested));
  CHECK(same(net.w.grad(), dw_nested));
  // an integer result cannot be backpropagated through
  REQUIRE_THROWS_WITH(checkpoint([&](const TensorList& in) { return argmax(matmul(in[0], net.w), -1); }, {xg}),
                      Contains("checkpoint: the function must return a float tensor"));
}

TEST_CASE("checkpoint: the forward keeps none of the function's intermediates", "[checkpoint]") {
  Tensor x = randn({256, 256}, DType::float64).requires_grad_();
  const CheckpointFn chain = [](const TensorList& in) {
    Tensor h = in[0];
    for (int i = 0; i < 8; ++i) h = tanh(h * 1.01);  // 16 saved (256, 256) tensors when recorded
    return h;
  };
  const std::size_t base = Storage::live_bytes();
  Tensor plain = chain({x});
  const std::size_t plain_bytes = Storage::live_bytes() - base;
  plain = Tensor();
  const std::size_t base2 = Storage::live_bytes();
  Tensor ck = checkpoint(chain, {x});
  const std::size_t checkpointed_bytes = Storage::live_bytes() - base2;
  const std::size_t one = 256 * 256 * 8;
  CHECK(plain_bytes >= 8 * one);       // the recorded graph keeps the activations
  CHECK(checkpointed_bytes <= 1 * one);  // only the output (the input is the caller's)
  sum(ck).backward();
  CHECK(x.grad().defined());
}
