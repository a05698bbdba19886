// The properties exercise 9 is graded on (tag [learn.09]), easy to hard: the Linear module's
// state dict, its init, its forward against tapegrad's nn::Linear and its gradient; then the AdamW
// step: its state, its first step (bias correction), its decay on every parameter, and 5 steps
// against tapegrad's optim::AdamW and against PyTorch's torch.optim.AdamW (reference.inc, made by
// make_reference.py). The AdamW properties train tapegrad's own nn::Linear, so that a mistake in
// part (a) does not show again in part (b).
#include <cmath>
#include <functional>

#include "09_linear_adamw/exercise.hpp"
#include "grading/grading.hpp"

using namespace tapegrad;
using learn::AdamWOptions;
using learn::AdamWState;
using learn::grading::num;
using learn::grading::tensors_close;

namespace {

#include "reference.inc"

std::string shape_is(const std::string& what, const Tensor& t, const Shape& want) {
  if (!t.defined()) return what + " is not set: register it in the constructor and keep its handle";
  return t.shape() == want ? "" : what + " has shape " + shape_str(t.shape()) + ", it should be " + shape_str(want);
}

std::shared_ptr<nn::Linear> tapegrad_linear(std::int64_t in, std::int64_t out) {
  return std::make_shared<nn::Linear>(nn::LinearOptions(in, out).dtype(DType::float64));
}

// L = Σ (x·Wᵀ + b − target)², the loss every AdamW property trains on.
Tensor loss(nn::Linear& layer, const Tensor& x, const Tensor& target) {
  const Tensor d = layer.forward(x) - target;
  return sum(d * d);
}

// The parameters (weight, bias) of a float64 nn::Linear that starts at `start`, after each of
// `steps` steps: zero the gradients, backward through the loss, then `step`.
using Trajectory = std::vector<std::pair<Tensor, Tensor>>;
Trajectory train(const io::StateDict& start, const Tensor& x, const Tensor& target, int steps,
                 const std::function<void(nn::Linear&)>& step) {
  auto layer = tapegrad_linear(start.at("weight").size(1), start.at("weight").size(0));
  io::load_state_dict(*layer, start);
  Trajectory out;
  for (int k = 0; k < steps; ++k) {
    layer->weight.reset_grad();
    layer->bias.reset_grad();
    loss(*layer, x, target).backward();
    step(*layer);
    out.emplace_back(layer->weight.clone(), layer->bias.clone());
  }
  return out;
}

std::function<void(nn::Linear&)> student_step(const AdamWOptions& o) {
  auto state = std::make_shared<AdamWState>();
  return [o, state](nn::Linear& layer) { learn::adamw_step({layer.weight, layer.bias}, *state, o); };
}

// A tapegrad optimizer (AdamW, or Adam with L2 decay) made on the first call.
template <typename Optimizer>
std::function<void(nn::Linear&)> library_step(const AdamWOptions& o) {
  auto opt = std::make_shared<std::unique_ptr<Optimizer>>();
  return [o, opt](nn::Linear& layer) {
    if (!*opt)
      *opt = std::make_unique<Optimizer>(layer.named_parameters(), optim::AdamOptions(o.lr)
                                                                       .betas({o.beta1, o.beta2})
                                                                       .eps(o.eps)
                                                                       .weight_decay(o.weight_decay));
    (*opt)->step();
  };
}

// "" when got follows want step by step, else the first difference, named.
std::string same_trajectory(const Trajectory& got, const Trajectory& want, const std::string& source) {
  for (std::size_t k = 0; k < want.size(); ++k) {
    const std::string after = "after step " + std::to_string(k + 1) + ", the ";
    for (const std::string& sentence : {tensors_close(after + "weight", got[k].first, want[k].first, source, 1e-9, 1e-12),
                                        tensors_close(after + "bias", got[k].second, want[k].second, source, 1e-9, 1e-12)})
      if (!sentence.empty()) return sentence;
  }
  return "";
}

// The student's 5 steps against want; when they differ, a guess at why (Adam's L2 decay).
std::string adamw_follows(const Trajectory& got, const Trajectory& want, const std::string& source,
                          const io::StateDict& start, const Tensor& x, const Tensor& target, const AdamWOptions& o) {
  const std::string mismatch = same_trajectory(got, want, source);
  if (mismatch.empty() || o.weight_decay == 0) return mismatch;
  if (same_trajectory(got, train(start, x, target, 5, library_step<optim::Adam>(o)), "").empty())
    return mismatch + ". Your steps are Adam's with L2 decay: you added λ·θ to the gradient, so it went through m "
                      "and v. AdamW's decay is decoupled: θ ← θ − lr·(m̂ / (√v̂ + ε) + λ·θ), with m and v made from g alone";
  return mismatch;
}

}  // namespace

TEST_CASE("the module's state dict is weight (out × in), then bias (out)", "[learn.09]") {
  const auto [in, out] = GENERATE(values<std::pair<std::int64_t, std::int64_t>>({{3, 2}, {1, 5}, {7, 7}}));
  Generator gen(1);
  learn::Linear layer(in, out, gen);
  const io::StateDict sd = io::state_dict(layer);
  std::string names;
  for (const auto& [name, t] : sd) names += (names.empty() ? "" : ", ") + name;
  LEARN_REQUIRE(names == "weight, bias" ? ""
                                        : "the state dict holds [" + names +
                                              "], it should hold [weight, bias]: register_parameter(\"weight\", ...), "
                                              "then register_parameter(\"bias\", ...)");
  LEARN_CHECK(shape_is("the weight", layer.weight, {out, in}));
  LEARN_CHECK(shape_is("the bias", layer.bias, {out}));
  LEARN_CHECK(layer.weight.requires_grad() && layer.bias.requires_grad()
                  ? ""
                  : "the weight and the bias should require grad: register_parameter marks them, use the tensor it returns");
}

TEST_CASE("init: weight and bias are drawn from U(−1/√in, 1/√in) with the Generator given", "[learn.09]") {
  const std::int64_t in = GENERATE(4, 16, 100);
  const std::int64_t out = 64;
  const double bound = 1 / std::sqrt(double(in));
  Generator gen(7);
  learn::Linear layer(in, out, gen, DType::float64);
  for (const auto& [what, t] : {std::pair<std::string, Tensor>{"weight", layer.weight}, {"bias", layer.bias}}) {
    LEARN_REQUIRE(t.defined() ? "" : "the " + what + " is not set");
    const std::vector<double> v = t.contiguous().to_vector<double>();
    double lo = v[0], hi = v[0];
    for (double e : v) lo = std::min(lo, e), hi = std::max(hi, e);
    LEARN_CHECK(lo >= -bound && hi <= bound
                    ? ""
                    : "the " + what + "'s values lie in [" + num(lo) + ", " + num(hi) + "], outside [−1/√in, 1/√in] = [" +
                          num(-bound) + ", " + num(bound) + "] for in = " + std::to_string(in));
    LEARN_CHECK(lo < -bound / 2 && hi > bound / 2
                    ? ""
                    : "the " + what + "'s values lie in [" + num(lo) + ", " + num(hi) + "]: " + std::to_string(v.size()) +
                          " draws from U(−1/√in, 1/√in) should spread over most of [" + num(-bound) + ", " + num(bound) + "]");
  }
  Generator same(7);
  learn::Linear again(in, out, same, DType::float64);
  LEARN_CHECK(tensors_close("the weight made from a second Generator(7)", again.weight, layer.weight,
                            "the weight made from the first", 0, 0).empty()
                  ? ""
                  : "two Generators with the same seed give different weights: draw from the Generator given (gen), "
                    "not from the default one");
}

TEST_CASE("forward equals tapegrad's nn::Linear given the same parameters", "[learn.09]") {
  const std::int64_t in = GENERATE(take(3, random(1, 9)));
  const std::int64_t out = GENERATE(1, 4);
  const Shape batch = GENERATE(Shape{5}, Shape{2, 3});
  Generator gen(in * 10 + out);
  learn::Linear layer(in, out, gen, DType::float64);
  auto reference = tapegrad_linear(in, out);
  io::load_state_dict(*reference, io::state_dict(layer));
  Shape x_shape = batch;
  x_shape.push_back(in);
  const Tensor x = randn(x_shape, gen, DType::float64);
  LEARN_CHECK(tensors_close("x·Wᵀ + b for x of shape " + shape_str(x_shape), layer(x), reference->forward(x),
                            "tapegrad's nn::Linear", 1e-12, 1e-12));
}

TEST_CASE("the gradient through the module matches the numerical derivative (x, W and b, float64)", "[learn.09]") {
  const std::int64_t in = GENERATE(take(2, random(1, 6)));
  const std::int64_t out = GENERATE(take(2, random(1, 6)));
  Generator gen(100 + in * 7 + out);
  learn::Linear layer(in, out, gen, DType::float64);
  const Tensor x = learn::grading::leaf({3, in}, gen);
  LEARN_CHECK(learn::grading::gradient_matches_numerical(
      [&](const TensorList& inputs) { return layer(inputs[0]); }, {x, layer.weight, layer.bias}, {"x", "W", "b"}));
}

TEST_CASE("AdamW's state: step counts the steps, m and v hold one tensor per parameter, of its shape", "[learn.09]") {
  Generator gen(3);
  auto layer = tapegrad_linear(4, 3);
  const Tensor x = randn({2, 4}, gen, DType::float64), target = randn({2, 3}, gen, DType::float64);
  AdamWState state;
  for (int k = 1; k <= 2; ++k) {
    loss(*layer, x, target).backward();
    learn::adamw_step({layer->weight, layer->bias}, state, AdamWOptions{});
    LEARN_CHECK(state.step == k ? "" : "after " + std::to_string(k) + " steps, state.step is " + std::to_string(state.step));
  }
  LEARN_REQUIRE(state.m.size() == 2 && state.v.size() == 2
                    ? ""
                    : "state.m and state.v should hold one tensor per parameter (2), they hold " +
                          std::to_string(state.m.size()) + " and " + std::to_string(state.v.size()));
  LEARN_CHECK(shape_is("state.m[0] (the weight's first moment)", state.m[0], {3, 4}));
  LEARN_CHECK(shape_is("state.v[1] (the bias's second moment)", state.v[1], {3}));
}

TEST_CASE("bias correction: the first step moves each parameter by lr·g/(|g| + ε), about lr", "[learn.09]") {
  const double lr = GENERATE(0.01, 0.2);
  Generator gen(5);
  Tensor theta = randn({6}, gen, DType::float64).requires_grad_();
  const Tensor g = randn({6}, gen, DType::float64);  // |g| >> ε: the step is lr·sign(g)
  const Tensor before = theta.clone();
  sum(theta * g).backward();  // dL/dθ = g
  AdamWState state;
  learn::adamw_step({theta}, state, AdamWOptions{.lr = lr, .weight_decay = 0});
  const Tensor moved = before - theta.detach(), want = lr * g / (abs(g) + 1e-8);
  const std::string mismatch = tensors_close("the first step", moved, want, "lr·g/(|g| + ε)", 1e-9, 1e-15);
  if (mismatch.empty()) return;
  const double ratio = std::abs(moved.contiguous().to_vector<double>()[0]) / lr;
  LEARN_CHECK(mismatch + ". It moved θ by " + num(ratio) +
              "·lr. At t = 1, bias correction gives m̂ = g and v̂ = g², so the step is lr·g/(|g| + ε) ≈ lr. Without it, m "
              "= (1 − β1)·g and v = (1 − β2)·g² are too small (they start at 0), and the step is lr·(1 − β1)/√(1 − β2) ≈ "
              "3.162·lr: divide m by 1 − β1ᵗ and v by 1 − β2ᵗ (t = the step count, after adding 1)");
}

TEST_CASE("decoupled decay on every parameter given, the bias too: a zero gradient only shrinks, θ ← (1 − lr·λ)·θ",
          "[learn.09]") {
  const double weight_decay = GENERATE(0.1, 0.5);
  Generator gen(11);
  auto layer = tapegrad_linear(3, 2);
  const Tensor w0 = layer->weight.clone(), b0 = layer->bias.clone();
  sum(layer->forward(randn({4, 3}, gen, DType::float64)) * 0.0).backward();  // gradients of zeros
  AdamWState state;
  const AdamWOptions o{.lr = 0.1, .weight_decay = weight_decay};
  learn::adamw_step({layer->weight, layer->bias}, state, o);
  const double shrink = 1 - o.lr * weight_decay;
  const std::string why = ": with g = 0, m̂ = v̂ = 0 and the step is lr·λ·θ alone (torch's AdamW decays every parameter "
                          "of its group, biases included)";
  const std::string weight = tensors_close("the weight after one step with a zero gradient", layer->weight.detach(),
                                           shrink * w0, "(1 − lr·λ)·θ", 1e-9, 1e-15);
  const std::string bias = tensors_close("the bias after one step with a zero gradient", layer->bias.detach(),
                                         shrink * b0, "(1 − lr·λ)·θ", 1e-9, 1e-15);
  LEARN_CHECK(weight.empty() ? "" : weight + why);
  LEARN_CHECK(bias.empty() ? "" : bias + why);
}

TEST_CASE("5 AdamW steps follow tapegrad's optim::AdamW", "[learn.09]") {
  const auto [lr, weight_decay] = GENERATE(values<std::pair<double, double>>({{1e-3, 0.01}, {0.05, 0.1}, {0.2, 0}}));
  const std::int64_t in = GENERATE(take(2, random(1, 6)));
  Generator gen(17 + in);
  auto start_layer = tapegrad_linear(in, 3);
  const io::StateDict start = io::state_dict(*start_layer);
  const Tensor x = randn({4, in}, gen, DType::float64), target = randn({4, 3}, gen, DType::float64);
  const AdamWOptions o{.lr = lr, .beta1 = 0.9, .beta2 = 0.99, .eps = 1e-8, .weight_decay = weight_decay};
  const Trajectory got = train(start, x, target, 5, student_step(o));
  const Trajectory want = train(start, x, target, 5, library_step<optim::AdamW>(o));
  LEARN_CHECK(adamw_follows(got, want, "tapegrad's optim::AdamW (lr " + num(lr) + ", λ " + num(weight_decay) + ")",
                            start, x, target, o));
}

TEST_CASE("5 AdamW steps follow PyTorch's torch.optim.AdamW (reference values)", "[learn.09]") {
  using namespace reference;
  io::StateDict start;
  start.insert("weight", tensor(weight0, {out, in}, DType::float64));
  start.insert("bias", tensor(bias0, {out}, DType::float64));
  const Tensor tx = tensor(x, {batch, in}, DType::float64), ttarget = tensor(target, {batch, out}, DType::float64);
  Trajectory want;
  for (int k = 0; k < steps; ++k)
    want.emplace_back(tensor(weight_after[k], {out, in}, DType::float64), tensor(bias_after[k], {out}, DType::float64));
  const AdamWOptions o{.lr = lr, .beta1 = beta1, .beta2 = beta2, .eps = eps, .weight_decay = weight_decay};
  LEARN_CHECK(adamw_follows(train(start, tx, ttarget, static_cast<int>(steps), student_step(o)), want, "torch.optim.AdamW", start, tx,
                            ttarget, o));
}
