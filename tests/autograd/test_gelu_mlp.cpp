// test_gelu_mlp.cpp — the fused feed-forward op gelu_mlp: bit for bit the numbers of
// linear(gelu(linear(...))) forward and backward (both GELU forms, with and without biases,
// on the multi-threaded path too), gradcheck and gradgradcheck, partial requires_grad, empty
// inputs, the memory it keeps, errors, and FeedForward's choice between fused and composed.
#include <string>

#include "support/gradcheck_catch.hpp"
#include "support/tensor_diff.hpp"

using namespace tapegrad;
using tapegrad::testing::max_abs_diff;
using tapegrad::testing::param;

namespace {

Tensor composed_mlp(const TensorList& in, const std::string& approximate) {
  return linear(gelu(linear(in[0], in[1], in[2]), approximate), in[3], in[4]);
}

Tensor fused_mlp(const TensorList& in, const std::string& approximate) {
  return gelu_mlp(in[0], in[1], in[2], in[3], in[4], approximate);
}

// x (rows..., in), w1 (hidden, in), b1, w2 (out, hidden), b2 as fresh float32 leaves; the
// biases undefined when !bias.
TensorList float_inputs(const Shape& x_shape, std::int64_t hidden, std::int64_t out, bool bias, std::uint64_t seed) {
  Generator gen(seed);
  const std::int64_t in = x_shape.back();
  TensorList t{randn(x_shape, gen), mul(randn({hidden, in}, gen), 0.3), mul(randn({hidden}, gen), 0.5),
               mul(randn({out, hidden}, gen), 0.2), mul(randn({out}, gen), 0.5)};
  if (!bias) t[2] = t[4] = Tensor();
  for (Tensor& x : t)
    if (x.defined()) x = x.detach().requires_grad_();
  return t;
}

// The output and every input's gradient for the output gradient dout.
TensorList run(const TensorList& in, const Tensor& dout, Tensor (*f)(const TensorList&, const std::string&),
               const std::string& approximate) {
  for (Tensor x : in)  // a handle: resets the leaf's own gradient
    if (x.defined()) x.reset_grad();
  const Tensor y = f(in, approximate);
  y.backward(dout);
  TensorList r{y.detach()};
  for (const Tensor& x : in) r.push_back(x.defined() ? x.grad() : Tensor());
  return r;
}

}  // namespace

TEST_CASE("gelu_mlp gives the composed ops' numbers bit for bit", "[gelu_mlp]") {
  const std::string approximate = GENERATE(as<std::string>{}, "tanh", "none");
  const bool bias = GENERATE(true, false);
  // 8·64 rows × 96 hidden = 49152 elements: above kParallelGrain, so the elementwise passes
  // run on the threaded path; 3×5 rows: one thread. On one thread the backward's pass also sums
  // b1's gradient (a hidden of 100: rows that are not whole vectors); on two, sum() does after.
  const Shape x_shape = GENERATE(Shape{8, 64, 16}, Shape{3, 5, 16});
  const std::int64_t hidden = GENERATE(96, 100);
  const int threads = GENERATE(1, 2);
  INFO("approximate=" << approximate << " bias=" << bias << " x " << shape_str(x_shape) << " hidden=" << hidden
                      << " threads=" << threads);
  const int saved_threads = get_num_threads();
  set_num_threads(threads);
  const TensorList in = float_inputs(x_shape, hidden, 12, bias, 7);
  Generator gen(11);
  Shape y_shape = x_shape;
  y_shape.back() = 12;
  const Tensor dout = randn(y_shape, gen);
  const TensorList fused = run(in, dout, fused_mlp, approximate);
  const TensorList composed = run(in, dout, composed_mlp, approximate);
  set_num_threads(saved_threads);
  const char* names[] = {"y", "dx", "dw1", "db1", "dw2", "db2"};
  for (std::size_t i = 0; i < fused.size(); ++i) {
    INFO(names[i]);
    REQUIRE(fused[i].defined() == composed[i].defined());
    if (fused[i].defined()) CHECK(max_abs_diff(fused[i], composed[i]) == 0.0);
  }
  // A result that is all zeros would pass the comparison above trivially.
  CHECK(max_abs_diff(fused[1], zeros_like(fused[1])) > 0.01);
}

TEST_CASE("gelu_mlp passes gradcheck and gradgradcheck", "[gelu_mlp]") {
  using L = const TensorList&;
  const std::string approximate = GENERATE(as<std::string>{}, "none", "tanh");
  INFO("approximate=" << approximate);
  SECTION("with biases, 3-d input") {
    const TensorList in{param({2, 3, 4}, 1), param({5, 4}, 2, 0.5), param({5}, 3), param({3, 5}, 4, 0.5),
                        param({3}, 5)};
    CHECK_GRADCHECK([&](L t) { return fused_mlp(t, approximate); }, in);
    CHECK_GRADGRADCHECK([&](L t) { return fused_mlp(t, approximate); }, in);
  }
  SECTION("without biases, non-contiguous input") {
    const TensorList in{param({4, 3}, 6), param({5, 4}, 7, 0.5), Tensor(), param({2, 5}, 8, 0.5), Tensor()};
    const auto f = [&](L t) { return gelu_mlp(t[0].transpose(0, 1), t[1], t[2], t[3], t[4], approximate); };
    CHECK_GRADCHECK(f, in);
    CHECK_GRADGRADCHECK(f, in);
  }
}

TEST_CASE("gelu_mlp gives gradients only to the inputs that require them", "[gelu_mlp]") {
  const TensorList all = float_inputs({6, 8}, 10, 4, true, 3);
  for (std::size_t wanted = 0; wanted < all.size(); ++wanted) {
    INFO("only input " << wanted << " requires grad");
    TensorList in;
    for (std::size_t i = 0; i < all.size(); ++i) {
      Tensor t = all[i].detach().clone();
      if (i == wanted) t.requires_grad_();
      in.push_back(t);
    }
    gelu_mlp(in[0], in[1], in[2], in[3], in[4], "tanh").sum().backward();
    TensorList ref = all;
    for (Tensor& t : ref) t = t.detach().clone().requires_grad_();
    composed_mlp(ref, "tanh").sum().backward();
    for (std::size_t i = 0; i < in.size(); ++i) CHECK(in[i].grad().defined() == (i == wanted));
    CHECK(max_abs_diff(in[wanted].grad(), ref[wanted].grad()) == 0.0);
  }
}

TEST_CASE("gelu_mlp handles empty inputs", "[gelu_mlp]") {
  SECTION("no rows") {
    const TensorList in = float_inputs({0, 4}, 6, 3, true, 1);
    const Tensor y = fused_mlp(in, "tanh");
    CHECK(y.shape() == Shape{0, 3});
    y.sum().backward();
    CHECK(max_abs_diff(in[1].grad(), zeros({6, 4})) == 0.0);
    CHECK(max_abs_diff(in[4].grad(), zeros({3})) == 0.0);
  }
  SECTION("no input features: y = gelu(b1)·W2ᵀ + b2") {
    const TensorList in = float_inputs({2, 0}, 6, 3, true, 2);
    const Tensor y = fused_mlp(in, "tanh");
    CHECK(max_abs_diff(y, composed_mlp(in, "tanh")) == 0.0);
    y.sum().backward();
    CHECK(in[0].grad().shape() == Shape{2, 0});
  }
}

TEST_CASE("gelu_mlp keeps fc1's output for the backward, not gelu's", "[gelu_mlp]") {
  // 256 rows, hidden 512: each (rows, hidden) float32 tensor is 512 KiB, far above the rest.
  const TensorList in = float_inputs({256, 32}, 512, 32, true, 5);
  const std::size_t hidden_bytes = 256 * 512 * sizeof(float);
  auto kept_bytes = [&](Tensor (*f)(const TensorList&, const std::string&)) {
    const std::size_t before = Storage::live_bytes();
    const Tensor y = f(in, "tanh");
    return Storage::live_bytes() - before;  // y and what its graph keeps
  };
  const std::size_t fused = kept_bytes(fused_mlp), composed = kept_bytes(composed_mlp);
  INFO("fused keeps " << fused << " bytes, composed " << composed);
  CHECK(fused < composed);
  CHECK(composed - fused == hidden_bytes);
}

TEST_CASE("gelu_mlp names the problem in its errors", "[gelu_mlp]") {
  const Tensor x = zeros({2, 4}), w1 = zeros({5, 4}), b1 = zeros({5}), w2 = zeros({3, 5}), b2 = zeros({3});
  CHECK_THROWS_WITH(gelu_mlp(x, w1, b1, w2, b2, "erf"), Catch::Contains("gelu_mlp") && Catch::Contains("\"erf\""));
  CHECK_THROWS_AS(gelu_mlp(zeros({2, 3}), w1, b1, w2, b2), ShapeError);
  CHECK_THROWS_WITH(gelu_mlp(zeros({2, 3}), w1, b1, w2, b2), Catch::Contains("[2, 3]") && Catch::Contains("[5, 4]"));
  CHECK_THROWS_WITH(gelu_mlp(x, w1, b1, zeros({3, 6}), b2), Catch::Contains("w2") && Catch::Contains("[3, 6]"));
  CHECK_THROWS_WITH(gelu_mlp(x, w1, zeros({4}), w2, b2), Catch::Contains("b1"));
  CHECK_THROWS_WITH(gelu_mlp(x, w1, b1, w2, zeros({5})), Catch::Contains("b2"));
  CHECK_THROWS_AS(gelu_mlp(x, w1, b1, w2, zeros({3}, DType::float64)), DTypeError);
}

TEST_CASE("FeedForward runs GELU fused, and composed with hooks on fc1 or fc2 or in anomaly mode", "[gelu_mlp][nn]") {
  manual_seed(3);
  for (const auto act : {nn::Activation::gelu, nn::Activation::gelu_tanh}) {
    INFO(nn::activation_name(act));
    nn::FeedForward ff(nn::FeedForwardOptions(8, 32).activation(act));
    Generator gen(4);
    const Tensor x = randn({2, 5, 8}, gen).requires_grad_();
    const Tensor fused = ff.forward(x);
    REQUIRE(fused.grad_fn());
    CHECK(fused.grad_fn()->name == "gelu_mlp");

    int calls = 0;
    auto handle = ff.fc2->register_forward_hook([&](nn::Module&, const TensorList&, Tensor&) { ++calls; });
    const Tensor composed = ff.forward(x);
    CHECK(calls == 1);
    CHECK(composed.grad_fn()->name != "gelu_mlp");
    CHECK(max_abs_diff(fused, composed) == 0.0);
    handle.remove();
    CHECK(ff.forward(x).grad_fn()->name == "gelu_mlp");
    AnomalyModeGuard anomaly;
    CHECK(ff.forward(x).grad_fn()->name != "gelu_mlp");
  }
  nn::FeedForward relu_ff(nn::FeedForwardOptions(8, 32).activation(nn::Activation::relu));
  CHECK(relu_ff.forward(randn({2, 8}).requires_grad_()).grad_fn()->name != "gelu_mlp");
}
