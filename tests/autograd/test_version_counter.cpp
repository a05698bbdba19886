// test_version_counter.cpp — a backward refuses to run on a tensor written in place after an op
// saved it (PyTorch's "modified by an inplace operation ... is at version 1; expected version
// 0"), and lets through the writes that change no gradient: into a tensor no backward keeps.
// Also: the flags of grad() and backward() go by name (GradOptions), so `grad(y, x, {}, true)`
// no longer compiles.
#include <concepts>
#include <type_traits>

#include <catch2/catch.hpp>
#include <tapegrad/tapegrad.hpp>

using namespace tapegrad;
using Catch::Matchers::Contains;

namespace {

Tensor param(const Shape& shape, std::uint64_t seed) {
  Generator gen(seed);
  return randn(shape, gen, DType::float64).requires_grad_();
}

// The message of the GraphError that f throws ("" when it throws none).
template <typename F>
std::string refusal(F&& f) {
  try {
    f();
  } catch (const GraphError& e) {
    return e.what();
  }
  return "";
}

// The message names the op, the tensor, and both versions, and says what to do.
void check_refused(const std::string& message, const std::string& op, const std::string& which, int now,
                   int expected) {
  INFO(message);
  CHECK(message.find("backward of '" + op + "'") != std::string::npos);
  CHECK(message.find(which) != std::string::npos);
  CHECK(message.find("is at version " + std::to_string(now) + "; expected version " + std::to_string(expected)) !=
        std::string::npos);
  CHECK(message.find("clone()") != std::string::npos);
  CHECK(message.find("optimizer") != std::string::npos);
}

}  // namespace

TEST_CASE("version: copy_ and fill_ count their writes, views share the count", "[version]") {
  Tensor a = zeros({2, 3}, DType::float64);
  CHECK(a.version() == 0);
  a.fill_(1.0);
  CHECK(a.version() == 1);
  Tensor view = a.transpose(0, 1);
  view.copy_(ones({3, 2}, DType::float64));
  CHECK(a.version() == 2);
  CHECK(view.version() == 2);
  CHECK(a.clone().version() == 1);  // a new buffer: written once by the copy that made it
}

TEST_CASE("version: a saved input written by copy_ is refused", "[version]") {
  Tensor x = param({2, 3}, 1), w = param({3, 4}, 2);
  Tensor loss = matmul(x, w).sum();
  NoGradGuard no_grad;  // the write itself is not part of the graph (an optimizer would do it so)
  w.detach().copy_(zeros({3, 4}, DType::float64));
  GradModeGuard grad_on(true);
  check_refused(refusal([&] { loss.backward(); }), "matmul", "its input 1 (shape [3, 4])", 1, 0);
  CHECK_FALSE(x.grad().defined());  // refused before any gradient moved
}

TEST_CASE("version: a saved output written by fill_ is refused", "[version]") {
  Tensor x = param({4}, 3);
  Tensor y = exp(x);  // exp's backward reads its output: dx = dout · y
  Tensor loss = y.sum();
  y.detach().fill_(0.0);
  check_refused(refusal([&] { loss.backward(); }), "exp", "its output (shape [4])", 1, 0);
}

TEST_CASE("version: a write through a view of a saved tensor is refused", "[version]") {
  Tensor x = param({2, 3}, 4), w = param({4, 3}, 5);
  Tensor loss = matmul(x, w.transpose(0, 1)).sum();
  narrow(w.detach(), 0, 1, 1).fill_(7.0);  // one row of w, through another view of its storage
  check_refused(refusal([&] { loss.backward(); }), "matmul", "its input 1", 1, 0);
}

TEST_CASE("version: writes no backward depends on go through, as in PyTorch", "[version]") {
  // add keeps nothing of its inputs (its gradient is dout), so a write into one changes no
  // gradient; refusing it would refuse a right program.
  Tensor a = param({3}, 6), b = param({3}, 7);
  Tensor loss = add(a, b).sum();
  a.detach().fill_(5.0);
  REQUIRE_NOTHROW(loss.backward());
  CHECK(a.grad().to_vector() == std::vector<double>{1, 1, 1});
  // Writing into a clone is the fix the message gives.
  Tensor x = param({3}, 8);
  Tensor y = mul(x, x);
  Tensor scratch = x.detach().clone();
  scratch.fill_(0.0);
  mul(y, 1.0).sum().backward();
  CHECK(x.grad().to_vector() == mul(x.detach(), 2.0).to_vector());
}

TEST_CASE("version: an optimizer step before the backward is refused", "[version]") {
  nn::Linear layer(3, 2);
  optim::SGD sgd(layer.named_parameters(), optim::SGDOptions(0.1));
  Generator gen(9);
  Tensor loss = layer(randn({4, 3}, gen)).sum();
  const std::uint64_t before = layer.weight.version();
  sgd.zero_grad();
  sgd.step();  // steps no parameter without a gradient ...
  CHECK(layer.weight.version() == before);
  layer.weight.set_grad(ones({2, 3}));
  layer.bias.set_grad(ones({2}));
  sgd.step();  // ... and counts the write of each one it steps
  CHECK(layer.weight.version() == before + 1);
  check_refused(refusal([&] { loss.backward(); }), "linear", "its input 1 (shape [2, 3])", 1, 0);
}

// The classic GAN loop: the generator's loss goes through the discriminator, whose step runs
// between the discriminator's backward and the generator's. Before version counters the
// generator's gradient was computed with the stepped weights, silently.
TEST_CASE("version: the GAN loop that steps D before G's backward is refused", "[version]") {
  auto run = [](bool step_d_first) {
    Generator gen(10);
    auto G = std::make_shared<nn::Linear>(2, 3);
    auto D = std::make_shared<nn::Linear>(3, 1);
    optim::AdamW opt_d(D->named_parameters(), optim::AdamOptions(1e-2));
    Tensor real = randn({8, 3}, gen), z = randn({8, 2}, gen);
    Tensor fake = (*G)(z);
    Tensor d_loss = sub((*D)(fake.detach()).mean(), (*D)(real).mean());
    Tensor g_loss = neg((*D)(fake).mean());
    d_loss.backward();
    if (step_d_first) opt_d.step();
    g_loss.backward();
    if (!step_d_first) opt_d.step();
    return G->weight.grad();
  };
  check_refused(refusal([&] { run(true); }), "linear", "its input 1 (shape [1, 3])", 1, 0);
  Tensor g = run(false);  // the fix: every backward first, then the steps
  CHECK(g.defined());
}

TEST_CASE("version: a norm's output made again from a written input is refused", "[version]") {
  // The linear keeps a recipe for the norm's output (saved_tensor.hpp), made again from the
  // norm's input at backward time: a write into that input must be refused, not recomputed.
  Generator gen(11);
  nn::Linear head(4, 2);
  Tensor x = randn({3, 4}, gen).requires_grad_();
  Tensor h = layer_norm(x, {4});
  Tensor loss = head(h).sum();
  x.detach().fill_(1.0);
  REQUIRE_THROWS_WITH(loss.backward(), Contains("layer_norm") && Contains("is at version 1; expected version 0"));
  CHECK_FALSE(head.weight.grad().defined());
}

// --- the flags by name

template <typename... Args>
concept GradCallable = requires(Args... args) { grad(args...); };
template <typename... Args>
concept BackwardCallable = requires(const Tensor& t, Args... args) { t.backward(args...); };

// grad(y, x, {}, true) used to set retain_graph where the reader meant create_graph.
static_assert(!GradCallable<TensorList, TensorList, TensorList, bool>);
static_assert(!GradCallable<TensorList, TensorList, TensorList, bool, bool>);
static_assert(GradCallable<TensorList, TensorList, TensorList, GradOptions>);
static_assert(!BackwardCallable<Tensor, bool>);
static_assert(!BackwardCallable<Tensor, bool, bool>);
static_assert(BackwardCallable<Tensor, BackwardOptions>);
static_assert(!std::is_convertible_v<bool, GradOptions>);
static_assert(!std::is_convertible_v<bool, BackwardOptions>);

TEST_CASE("grad options: create_graph by name gives a gradient with a graph", "[version][higher_order]") {
  Tensor x = scalar_tensor(0.5, DType::float64).requires_grad_();
  Tensor y = pow(x, 3.0);
  Tensor dy = grad({y}, {x}, {}, {.create_graph = true})[0];  // 3x²
  REQUIRE(dy.requires_grad());
  CHECK(grad({dy}, {x})[0].item() == Approx(6 * 0.5));  // 6x
  Tensor z = pow(x, 2.0);
  Tensor dz = grad({z}, {x}, {}, {.retain_graph = true})[0];
  CHECK_FALSE(dz.requires_grad());  // no graph: only what was asked for
  CHECK_NOTHROW(z.backward());      // ... and the graph kept
}
