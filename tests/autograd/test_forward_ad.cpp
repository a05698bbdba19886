// test_forward_ad.cpp — jvp (autograd/forward_ad.hpp): the tangent equals central differences
// of the function along the tangent, and the reverse mode's transpose, ⟨jvp(v), u⟩ = ⟨v, vjp(u)⟩,
// in float64; forward over reverse gives the same Hessian-vector product as reverse over
// reverse; an op without a forward rule is refused by name; a plain training step keeps no rule.
#include <cmath>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "support/tensor_diff.hpp"

using namespace tapegrad;
using Catch::Matchers::Contains;
using tapegrad::testing::max_abs_diff;

namespace {

struct Case {
  std::string name;
  std::vector<Shape> shapes;
  JvpFn fn;
  bool positive = false;  // inputs drawn in (0.5, 1.5): log, sqrt, pow, div
};

double dot(const Tensor& a, const Tensor& b) { return sum(mul(a, b)).item(); }

std::vector<Case> cases() {
  using L = const TensorList&;
  return {
      {"add broadcast", {{2, 3}, {3}}, [](L in) { return add(in[0], in[1]); }},
      {"sub broadcast both ways", {{2, 1, 3}, {4, 1}}, [](L in) { return sub(in[0], in[1]); }},
      {"mul broadcast", {{2, 3}, {1, 3}}, [](L in) { return mul(in[0], in[1]); }},
      {"mul same tensor twice", {{3}}, [](L in) { return mul(in[0], in[0]); }},
      {"div", {{2, 3}, {3}}, [](L in) { return div(in[0], in[1]); }, true},
      {"pow tensor", {{2, 3}, {3}}, [](L in) { return pow(in[0], in[1]); }, true},
      {"pow scalar and scalar forms", {{2, 2}}, [](L in) { return (2.0 - pow(in[0], 2.5)) * 3.0 + 1.0 / in[0]; }, true},
      {"unary chain", {{2, 3}}, [](L in) { return tanh(sigmoid(exp(mul(in[0], 0.3)))); }},
      {"log sqrt rsqrt", {{2, 3}}, [](L in) { return add(log(in[0]), mul(sqrt(in[0]), rsqrt(in[0]))); }, true},
      {"gelu silu erf", {{2, 3}}, [](L in) { return add(add(gelu(in[0]), silu(in[0])), erf(in[0])); }},
      {"gelu tanh form, relu, abs, clamp", {{3, 4}},
       [](L in) { return add(add(gelu(in[0], "tanh"), relu(in[0])), add(abs(in[0]), clamp(in[0], -0.5, 0.5))); }},
      {"sum and mean over dims", {{2, 3, 4}}, [](L in) { return add(sum(in[0], {1}), mean(in[0], {1})); }},
      {"max over a dim", {{3, 5}}, [](L in) { return max(in[0], 1); }},
      {"matmul batched", {{2, 3, 4}, {4, 5}}, [](L in) { return matmul(in[0], in[1]); }},
      {"matmul vector", {{4}, {4, 2}}, [](L in) { return matmul(in[0], in[1]); }},
      {"linear", {{2, 3, 4}, {5, 4}, {5}}, [](L in) { return linear(in[0], in[1], in[2]); }},
      {"views", {{2, 3, 4}},
       [](L in) {
         const Tensor t = permute(transpose(in[0], 0, 2), {1, 0, 2});  // (3, 4, 2)
         return contiguous(expand(unsqueeze(slice(reshape(t, {12, 2}), 0, 1, 9, 2), 0), {3, 4, 2}));
       }},
      {"the input itself (a no-op conversion)", {{2}}, [](L in) { return in[0].to(DType::float64); }},
      {"softmax and log_softmax", {{2, 5}}, [](L in) { return add(softmax(in[0], 1), log_softmax(in[0], 0)); }},
      {"layer_norm with weight and bias", {{2, 3, 4}, {4}, {4}},
       [](L in) { return layer_norm(in[0], {4}, in[1], in[2]); }},
      {"layer_norm without affine, rms_norm", {{3, 4}, {4}},
       [](L in) { return add(layer_norm(in[0], {4}), rms_norm(in[0], {4}, in[1])); }},
      {"cross_entropy mean, label smoothing", {{4, 5}},
       [](L in) {
         const Tensor t = Tensor::from_vector(std::vector<std::int64_t>{1, 0, 4, 2}, {4});
         return cross_entropy(in[0], t, Reduction::mean, -100, 0.1);
       }},
      {"cross_entropy none, an ignored row, classes in dim 1", {{2, 3, 2}},
       [](L in) {
         const Tensor t = Tensor::from_vector(std::vector<std::int64_t>{2, -100, 0, 1}, {2, 2});
         return cross_entropy(in[0], t, Reduction::none);
       }},
      {"mse_loss", {{3, 2}, {3, 2}}, [](L in) { return mse_loss(in[0], in[1]); }},
      {"embedding and index_select", {{5, 3}},
       [](L in) {
         const Tensor idx = Tensor::from_vector(std::vector<std::int64_t>{4, 0, 4, 2}, {2, 2});
         const Tensor rows = Tensor::from_vector(std::vector<std::int64_t>{1, 1, 3}, {3});
         return add(sum(embedding(in[0], idx)), sum(index_select(in[0], 0, rows)));
       }},
      {"masked_fill and where", {{2, 3}, {3}},
       [](L in) {
         const Tensor mask = Tensor::from_vector(std::vector<std::int64_t>{1, 0, 1}, {3});
         return add(masked_fill(in[0], mask, 2.0), where(mask, in[1], in[0]));
       }},
      {"cat and stack", {{2, 3}, {1, 3}},
       [](L in) { return add(cat({in[0], in[1]}, 0), stack({in[1], in[1], in[1]}, 0).reshape({3, 3})); }},
      {"dropout with a fixed mask", {{4, 3}},
       [](L in) {
         Generator gen(11);
         return dropout(in[0], 0.5, true, &gen);
       }},
      {"rotary_embedding", {{1, 2, 3, 4}}, [](L in) { return rotary_embedding(in[0]); }},
      {"scaled_dot_product_attention, causal, grouped kv", {{1, 4, 3, 2}, {1, 2, 3, 2}, {1, 2, 3, 2}},
       [](L in) {
         AttentionOptions o;
         o.causal = true;
         return scaled_dot_product_attention(in[0], in[1], in[2], o);
       }},
      {"self_attention_packed", {{2, 3, 12}}, [](L in) { return self_attention_packed(in[0], 2); }},
      {"gelu_mlp", {{2, 3}, {4, 3}, {4}, {2, 4}, {2}},
       [](L in) { return gelu_mlp(in[0], in[1], in[2], in[3], in[4]); }},
      {"checkpoint", {{2, 3}, {3}},
       [](L in) { return checkpoint([](const TensorList& x) { return tanh(mul(x[0], x[1])); }, {in[0], in[1]}); }},
      {"clone", {{2}}, [](L in) { return mul(in[0].clone(), in[0]); }},
  };
}

TensorList inputs_of(const Case& c, Generator& gen) {
  TensorList in;
  for (const Shape& s : c.shapes) {
    Tensor x = randn(s, gen, DType::float64);
    if (c.positive) x = add(mul(rand(s, gen, DType::float64), 1.0), 0.5);
    in.push_back(x);
  }
  return in;
}

}  // namespace

TEST_CASE("jvp equals central differences along the tangent, and the transpose of the vjp", "[forward_ad]") {
  for (const Case& c : cases()) {
    INFO(c.name);
    Generator gen(3);
    const TensorList x = inputs_of(c, gen);
    TensorList v;
    for (const Tensor& xi : x) v.push_back(randn(xi.shape(), gen, DType::float64));
    const auto [y, dy] = jvp(c.fn, x, v);
    CHECK(max_abs_diff(y, c.fn(x)) == 0);
    // (f(x + εv) − f(x − εv)) / 2ε
    constexpr double eps = 1e-6;
    TensorList up, down;
    for (std::size_t i = 0; i < x.size(); ++i) {
      up.push_back(add(x[i], mul(v[i], eps)));
      down.push_back(sub(x[i], mul(v[i], eps)));
    }
    const Tensor numerical = div(sub(c.fn(up), c.fn(down)), 2 * eps);
    CHECK(max_abs_diff(dy, numerical) < 1e-6);
    // ⟨jvp(v), u⟩ = ⟨v, vjp(u)⟩
    TensorList leaves;
    for (const Tensor& xi : x) leaves.push_back(xi.detach().requires_grad_());
    const Tensor out = c.fn(leaves);
    const Tensor u = randn(out.shape(), gen, DType::float64);
    const TensorList g = grad({out}, leaves, {u});
    double rhs = 0;
    for (std::size_t i = 0; i < x.size(); ++i) rhs += dot(v[i], g[i]);
    CHECK(dot(dy, u) == Approx(rhs).epsilon(1e-12).margin(1e-13));
  }
}

TEST_CASE("jvp: undefined tangents are zeros, and an output that does not depend on the inputs has a zero tangent",
          "[forward_ad]") {
  Generator gen(1);
  const Tensor a = randn({3}, gen, DType::float64), b = randn({3}, gen, DType::float64);
  const Tensor va = randn({3}, gen, DType::float64);
  const auto [y, dy] = jvp([](const TensorList& in) { return mul(in[0], in[1]); }, {a, b}, {va, Tensor()});
  CHECK(max_abs_diff(dy, mul(va, b)) == 0);
  // a conversion carries the tangent over, converted (differences in float32 would be noise)
  const auto [h, dh] = jvp([](const TensorList& in) { return in[0].to(DType::float32); }, {a}, {va});
  CHECK(max_abs_diff(dh, va.to(DType::float32)) == 0);
  const Tensor c = randn({2}, gen, DType::float64);
  const auto [z, dz] = jvp([c](const TensorList&) { return mul(c, 2.0); }, {a}, {va});
  CHECK(max_abs_diff(dz, zeros({2}, DType::float64)) == 0);
}

TEST_CASE("Hessian-vector product: forward over reverse equals reverse over reverse", "[forward_ad]") {
  Generator gen(5);
  const Tensor w = randn({4, 3}, gen, DType::float64);
  const JvpFn f = [w](const TensorList& in) { return sum(pow(tanh(matmul(w, in[0])), 2.0)); };
  const Tensor x = randn({3}, gen, DType::float64), v = randn({3}, gen, DType::float64);
  const Tensor forward_over_reverse = hvp_forward_over_reverse(f, x, v);
  const Tensor leaf = x.detach().requires_grad_();
  const Tensor g = grad({f({leaf})}, {leaf}, {}, {.create_graph = true})[0];
  const Tensor reverse_over_reverse = grad({sum(mul(g, v))}, {leaf})[0];
  CHECK(max_abs_diff(forward_over_reverse, reverse_over_reverse) < 1e-12);
}

TEST_CASE("jvp refuses an op without a forward rule by name, and checks the tangents' shapes", "[forward_ad][errors]") {
  Generator gen(2);
  const Tensor x = randn({2, 3}, gen, DType::float64);
  // an op of a program's own, recorded with a backward and no forward rule (docs/adding-an-op.md)
  const auto doubled = [](const Tensor& in) {
    Tensor out = mul(in.detach(), 2.0);
    if (should_record({in})) record(out, "doubled", {in}, [](const Tensor& d) -> TensorList { return {mul(d, 2.0)}; });
    return out;
  };
  CHECK_THROWS_WITH(jvp([&](const TensorList& in) { return doubled(in[0]); }, {x}, {ones_like(x)}),
                    Contains("jvp: 'doubled' (output shape [2, 3]) has no forward rule"));
  CHECK_THROWS_WITH(jvp([](const TensorList& in) { return in[0]; }, {x}, {ones({3, 2}, DType::float64)}),
                    Contains("tangent 0 is [3, 2]") && Contains("its primal [2, 3]"));
  CHECK_THROWS_WITH(jvp([](const TensorList& in) { return in[0]; }, {x}, {}), Contains("1 primals but 0 tangents"));
}

TEST_CASE("jvp names what it refuses: an undefined primal or result, a tangent on integers, a rule of the wrong shape",
          "[forward_ad][errors]") {
  Generator gen(6);
  const Tensor x = randn({2, 3}, gen, DType::float64);
  const auto same = [](const TensorList& in) { return in[0]; };
  CHECK_THROWS_WITH(jvp(same, {Tensor()}, {Tensor()}), Contains("jvp: primal 0 is undefined"));
  const Tensor index = arange(3, DType::int64);
  CHECK_THROWS_WITH(jvp(same, {x, index}, {ones_like(x), zeros({3}, DType::int64)}),
                    Contains("jvp: primal 1 is int64: only floating tensors have a tangent"));
  // an integer primal without a tangent is a constant, passed as it is
  const auto [picked, dpicked] =
      jvp([](const TensorList& in) { return index_select(in[0], 1, in[1]); }, {x, index}, {ones_like(x), Tensor()});
  CHECK(max_abs_diff(dpicked, ones_like(x)) == 0);
  CHECK_THROWS_WITH(jvp([](const TensorList&) { return Tensor(); }, {x}, {ones_like(x)}),
                    Contains("jvp: the function returned an undefined tensor"));
  // a forward rule that forgets to broadcast: the walk stops at it, naming both shapes
  const auto broadcast_badly = [](const TensorList& in) {
    Tensor out = expand(in[0].detach(), {2, 3});
    record(out, "broadcast_badly", {in[0]}, [](const Tensor& d) -> TensorList { return {sum(d, {0}, true)}; });
    record_forward(out, [](const TensorList& t) { return t[0]; });
    return out;
  };
  CHECK_THROWS_WITH(jvp(broadcast_badly, {randn({1, 3}, gen, DType::float64)}, {ones({1, 3}, DType::float64)}),
                    Contains("the forward rule of 'broadcast_badly' returned a tangent of shape [1, 3] float64") &&
                        Contains("for an output of shape [2, 3] float64"));
  CHECK_THROWS_WITH(hvp_forward_over_reverse([](const TensorList& in) { return mul(in[0], 2.0); }, x, ones_like(x)),
                    Contains("hvp_forward_over_reverse: f must return one number, got shape [2, 3]"));
}

TEST_CASE("a training step keeps no forward rule: rules exist only while jvp records", "[forward_ad]") {
  Generator gen(4);
  const Tensor x = randn({3}, gen, DType::float64).requires_grad_();
  const Tensor y = tanh(mul(x, 2.0));
  CHECK_FALSE(y.grad_fn()->forward_fn);
}
