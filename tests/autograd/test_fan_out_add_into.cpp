// test_fan_out_add_into.cpp — a backward that adds its gradient into the sum the engine holds
// for a non-leaf input (grad_to_add_into, fan-out): in a pre-LN block the residual add's
// gradient reaches the block's input first, and LayerNorm's backward adds its dx into it. The
// gradients are bit for bit those of the engine's own add (anomaly mode, which turns every
// offer off, gives the reference), the offer is taken where it should be (the input's final
// gradient is the add's gradient buffer itself), and a sum that someone else still holds is
// never offered (a hook keeps the residual's gradient, which is also the pending sum).
#include <cstdint>

#include "support/tensor_diff.hpp"

#include <catch2/catch.hpp>

using namespace tapegrad;
using tapegrad::testing::max_abs_diff;

namespace {

// y = 1.5·x, z = y + linear(layer_norm(y)), loss = Σ z ⊙ R: y fans out to the add and the norm,
// and the norm's gradient comes back through the linear, after the add's.
struct Block {
  Tensor x, ln_w, ln_b, W, b, R;
  const void* y_grad = nullptr;  // where y's gradient and z's were, seen by hooks
  const void* z_grad = nullptr;

  Block(DType dtype, std::uint64_t seed) {
    Generator gen(seed);
    x = randn({3, 5, 8}, gen, dtype).requires_grad_();
    ln_w = add(mul(randn({8}, gen, dtype), 0.1), 1.0).detach().requires_grad_();
    ln_b = mul(randn({8}, gen, dtype), 0.1).detach().requires_grad_();
    W = mul(randn({8, 8}, gen, dtype), 0.3).detach().requires_grad_();
    b = mul(randn({8}, gen, dtype), 0.1).detach().requires_grad_();
    R = randn({3, 5, 8}, gen, dtype);
  }

  // through_linear = false gives z = y + layer_norm(y) instead, where the norm's output gradient and
  // y's pending sum are one tensor.
  void backward(bool through_linear = true) {
    const Tensor y = mul(x, 1.5);
    const Tensor h = layer_norm(y, {8}, ln_w, ln_b, 1e-5);
    const Tensor z = add(y, through_linear ? linear(h, W, b) : h);
    y.register_hook([this](const Tensor& g) { y_grad = g.raw_data(); return Tensor(); });
    z.register_hook([this](const Tensor& g) { z_grad = g.raw_data(); return Tensor(); });
    sum(mul(z, R)).backward();
  }
};

}  // namespace

TEST_CASE("LayerNorm's backward adds into the residual's gradient, with the engine's bits", "[grad_add_into]") {
  for (const DType dtype : {DType::float32, DType::float64}) {
    INFO(dtype_name(dtype));
    Block direct(dtype, 5), reference(dtype, 5);
    direct.backward();
    {
      AnomalyModeGuard anomaly;  // no offers: the engine adds the two gradients itself
      reference.backward();
    }
    CHECK(max_abs_diff(direct.x.grad(), reference.x.grad()) == 0);
    CHECK(max_abs_diff(direct.ln_w.grad(), reference.ln_w.grad()) == 0);
    CHECK(max_abs_diff(direct.W.grad(), reference.W.grad()) == 0);
    CHECK(max_abs_diff(direct.x.grad(), zeros_like(direct.x.grad())) > 0.1);  // not trivially equal
    // Taken: y's gradient is the add's buffer, the norm's dx added into it. The reference's
    // is a new tensor, the engine's sum.
    CHECK(direct.y_grad == direct.z_grad);
    CHECK(reference.y_grad != reference.z_grad);
  }
}

TEST_CASE("a pending sum that the running backward also holds is not offered", "[grad_add_into]") {
  // z = y + layer_norm(y): the add hands its gradient to both, so the norm's dout is the very
  // tensor summing y's gradient, held twice: no offer, and the reference's gradients.
  Block direct(DType::float64, 9), reference(DType::float64, 9);
  direct.backward(false);
  {
    AnomalyModeGuard anomaly;
    reference.backward(false);
  }
  CHECK(max_abs_diff(direct.x.grad(), reference.x.grad()) == 0);
  CHECK(max_abs_diff(direct.ln_w.grad(), reference.ln_w.grad()) == 0);
}

TEST_CASE("a pending sum that someone else holds is not offered, and stays as it was", "[grad_add_into]") {
  // A hook on z keeps z's gradient: the add hands that same tensor on as y's first
  // contribution, so adding the norm's dx into it would change what the hook holds.
  Generator gen(3);
  const Tensor x = randn({4, 8}, gen, DType::float64).requires_grad_();
  const Tensor W = randn({8, 8}, gen, DType::float64).requires_grad_();
  const Tensor y = mul(x, 2.0);
  const Tensor z = add(y, linear(layer_norm(y, {8}, Tensor(), Tensor(), 1e-5), W));
  Tensor kept, as_it_was;
  z.register_hook([&](const Tensor& g) {
    kept = g;
    as_it_was = g.clone();
    return Tensor();
  });
  sum(mul(z, randn({4, 8}, gen, DType::float64))).backward();
  REQUIRE(kept.defined());
  CHECK(max_abs_diff(kept, as_it_was) == 0);
  CHECK(max_abs_diff(x.grad(), mul(kept, 2.0)) > 1e-3);  // the norm's part did reach x
}
