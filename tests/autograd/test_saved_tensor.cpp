// test_saved_tensor.cpp — a norm's output that the next linear (or gelu_mlp) keeps only as a
// recipe: the gradients are bit for bit those of keeping it, its memory is freed after the
// forward, the recipe is not used once the output was written, second derivatives still flow
// through it, and gelu_mlp writes GELU's output over fc1's only when the graph is not retained.
#include <string>

#include "support/gradcheck_catch.hpp"
#include "support/tensor_diff.hpp"

using namespace tapegrad;
using tapegrad::testing::max_abs_diff;
using tapegrad::testing::param;

namespace {

// Restores recomputation to its default after a test switched it.
struct RecomputeGuard {
  bool saved = is_recompute_enabled();
  explicit RecomputeGuard(bool enabled) { set_recompute_enabled(enabled); }
  ~RecomputeGuard() { set_recompute_enabled(saved); }
};

TensorList leaves(const std::vector<Shape>& shapes, DType dtype, std::uint64_t seed) {
  Generator gen(seed);
  TensorList t;
  for (const Shape& s : shapes) t.push_back(mul(randn(s, gen, dtype), 0.5).detach().requires_grad_());
  return t;
}

// norm(x) then a consumer; every leaf's gradient for the output gradient dout.
enum class Consumer { linear, gelu_mlp };
TensorList gradients(const TensorList& in, bool rms, Consumer consumer, const Tensor& dout) {
  for (Tensor t : in) t.reset_grad();
  const Tensor y = rms ? rms_norm(in[0], {in[0].size(-1)}, in[1]) : layer_norm(in[0], {in[0].size(-1)}, in[1], in[2]);
  const Tensor z = consumer == Consumer::linear ? linear(y, in[3], in[4])
                                                : gelu_mlp(y, in[3], in[4], in[5], in[6], "tanh");
  z.backward(dout);
  TensorList g{z.detach()};
  for (const Tensor& t : in) g.push_back(t.grad());
  return g;
}

}  // namespace

TEST_CASE("a norm's output made again in the backward gives the same gradients, bit for bit", "[saved_tensor]") {
  const bool rms = GENERATE(false, true);
  const Consumer consumer = GENERATE(Consumer::linear, Consumer::gelu_mlp);
  const DType dtype = GENERATE(DType::float32, DType::float64);
  // 4·128 rows of 64: above kParallelGrain, so the norm's kernels run on the threaded path
  INFO("rms=" << rms << " consumer=" << (consumer == Consumer::linear ? "linear" : "gelu_mlp") << " "
              << dtype_name(dtype));
  const std::int64_t C = 64, H = 96, out = consumer == Consumer::linear ? H : 24;
  const TensorList in = leaves({{4, 128, C}, {C}, {C}, {H, C}, {H}, {24, H}, {24}}, dtype, 5);
  Generator gen(9);
  const Tensor dout = randn({4, 128, out}, gen, dtype);
  TensorList kept, made;
  {
    RecomputeGuard off(false);
    kept = gradients(in, rms, consumer, dout);
  }
  {
    RecomputeGuard on(true);
    made = gradients(in, rms, consumer, dout);
  }
  for (std::size_t i = 0; i < kept.size(); ++i) {
    INFO("result " << i);
    REQUIRE(kept[i].defined() == made[i].defined());
    if (kept[i].defined()) CHECK(max_abs_diff(kept[i], made[i]) == 0.0);
  }
  CHECK(max_abs_diff(made[4], zeros_like(made[4])) > 0.01);  // the linear's weight gradient is not trivially 0
}

TEST_CASE("a norm's output that only a linear keeps is freed after the forward", "[saved_tensor]") {
  const TensorList in = leaves({{256, 32}, {32}, {32}, {48, 32}, {48}}, DType::float32, 3);
  auto live_after_forward = [&](bool recompute) {
    RecomputeGuard guard(recompute);
    const std::size_t before = Storage::live_bytes();
    Tensor z;
    {
      const Tensor y = layer_norm(in[0], {32}, in[1], in[2]);
      z = linear(y, in[3], in[4]);
    }
    const std::size_t live = Storage::live_bytes() - before;
    z.sum().backward();
    return live;
  };
  const std::size_t kept = live_after_forward(false), made = live_after_forward(true);
  CHECK(kept - made == 256 * 32 * sizeof(float));  // exactly the norm's output
}

TEST_CASE("the recipe is kept only while the output is unwritten and recomputation is on", "[saved_tensor]") {
  const TensorList in = leaves({{6, 8}, {8}, {8}}, DType::float64, 4);
  SECTION("a fresh output keeps its recipe") {
    const Tensor y = layer_norm(in[0], {8}, in[1], in[2]);
    CHECK(SavedTensor(y).is_recipe());
    CHECK_FALSE(SavedTensor(y.reshape({48})).is_recipe());  // a view: kept as it is
  }
  SECTION("written through a view: the tensor itself is kept") {
    const Tensor y = layer_norm(in[0], {8}, in[1], in[2]);
    narrow(y, 0, 1, 2).fill_(0.25);
    CHECK_FALSE(SavedTensor(y).is_recipe());
  }
  SECTION("written with copy_: kept") {
    Tensor y = layer_norm(in[0], {8}, in[1], in[2]);
    y.copy_(ones({6, 8}, DType::float64));
    CHECK_FALSE(SavedTensor(y).is_recipe());
  }
  SECTION("recomputation off: kept") {
    RecomputeGuard off(false);
    const Tensor y = layer_norm(in[0], {8}, in[1], in[2]);
    CHECK_FALSE(SavedTensor(y).is_recipe());
  }
  SECTION("not recorded (no grad): no recipe") {
    NoGradGuard no_grad;
    const Tensor y = layer_norm(in[0], {8}, in[1], in[2]);
    CHECK_FALSE(SavedTensor(y).is_recipe());
  }
}

TEST_CASE("a linear over a norm's output that was written uses the written values", "[saved_tensor]") {
  const TensorList in = leaves({{6, 8}, {8}, {8}, {5, 8}}, DType::float64, 6);
  const Tensor y = layer_norm(in[0], {8}, in[1], in[2]);
  narrow(y, 0, 0, 3).fill_(2.0);  // not recorded: the linear sees these values
  linear(y, in[3]).sum().backward();
  // dW = Σ_rows dy ⊗ y with dy = 1: each row of dW is the column sums of the written y
  const Tensor expected = add(zeros({5, 8}, DType::float64), sum(y.detach(), {0}, true));
  CHECK(max_abs_diff(in[3].grad(), expected) < 1e-12);
}

TEST_CASE("second derivatives flow through a norm's output made again", "[saved_tensor]") {
  using L = const TensorList&;
  const TensorList in{param({3, 4}, 1), param({4}, 2), param({4}, 3), param({5, 4}, 4, 0.5), param({5}, 5)};
  const auto ln_linear = [](L t) { return linear(layer_norm(t[0], {4}, t[1], t[2]), t[3], t[4]); };
  const auto rms_mlp = [](L t) { return gelu_mlp(rms_norm(t[0], {4}, t[1]), t[3], t[4], t[3].transpose(0, 1), t[2]); };
  CHECK_GRADCHECK(ln_linear, in);
  CHECK_GRADGRADCHECK(ln_linear, in);
  CHECK_GRADGRADCHECK(rms_mlp, in);

  SECTION("the gradient with respect to the norm's output itself, from a recorded backward") {
    auto second = [&](bool recompute) {
      RecomputeGuard guard(recompute);
      const Tensor y = layer_norm(in[0], {4}, in[1], in[2]);
      const Tensor z = linear(y, in[3], in[4]);
      const Tensor dw = grad({mul(z, z).sum()}, {in[3]}, {}, {.create_graph = true})[0];
      return grad({mul(dw, dw).sum()}, {y})[0];
    };
    const Tensor kept = second(false), made = second(true);
    CHECK(max_abs_diff(kept, made) < 1e-12);
    CHECK(max_abs_diff(made, zeros_like(made)) > 1e-3);
  }
}

TEST_CASE("gelu_mlp's backward writes over fc1's output only when the graph is not retained", "[saved_tensor]") {
  const TensorList in = leaves({{16, 8}, {12, 8}, {12}, {4, 12}, {4}}, DType::float32, 8);
  auto grads = [&](bool retain, int passes) {
    for (Tensor t : in) t.reset_grad();
    const Tensor y = gelu_mlp(in[0], in[1], in[2], in[3], in[4], "none");
    for (int p = 0; p < passes; ++p) y.sum().backward(Tensor(), {.retain_graph = retain && p + 1 < passes});
    TensorList g;
    for (const Tensor& t : in) g.push_back(t.grad());
    return g;
  };
  const TensorList once = grads(false, 1), twice = grads(true, 2);
  for (std::size_t i = 0; i < in.size(); ++i) {
    INFO("input " << i);
    // the second pass adds the same gradient again: fc1's output was still there
    CHECK(max_abs_diff(twice[i], mul(once[i], 2.0)) == 0.0);
  }
  CHECK_FALSE(saved_tensors_freed_after());  // outside a backward function
}

TEST_CASE("cross_entropy writes the gradient over the logits only when no one else holds them", "[saved_tensor]") {
  const std::int64_t N = 64, V = 200;
  Generator gen(12);
  Tensor w = mul(randn({V, 16}, gen), 0.3).detach().requires_grad_();
  const Tensor h = randn({N, 16}, gen);
  const Tensor targets = randint(0, V, {N}, gen);
  auto run = [&](bool hold_logits, Tensor* held) {
    w.reset_grad();
    const std::size_t before = Storage::live_bytes();
    Storage::reset_peak_live_bytes();
    Tensor loss;
    if (hold_logits) {
      *held = linear(h, w);
      loss = cross_entropy(*held, targets);
    } else {
      loss = cross_entropy(linear(h, w), targets);
    }
    loss.backward();
    return std::pair{w.grad(), Storage::peak_live_bytes() - before};
  };
  Tensor held;
  const auto [grad_held, peak_held] = run(true, &held);
  const Tensor held_copy = held.detach().clone();
  const auto [grad_free, peak_free] = run(false, nullptr);
  CHECK(max_abs_diff(grad_held, grad_free) == 0.0);  // the same gradient, bit for bit
  CHECK(peak_held - peak_free == N * V * sizeof(float));  // one (N, V) buffer less
  CHECK(max_abs_diff(held, linear(h, w).detach()) == 0.0);  // the held logits were not written
  CHECK(max_abs_diff(held, held_copy) == 0.0);

  SECTION("a retained graph keeps the logits: two passes give twice the gradient") {
    w.reset_grad();
    const Tensor loss = cross_entropy(linear(h, w), targets);
    loss.backward(Tensor(), {.retain_graph = true});
    loss.backward();
    CHECK(max_abs_diff(w.grad(), mul(grad_free, 2.0)) == 0.0);
  }
}
