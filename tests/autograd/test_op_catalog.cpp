// test_op_catalog.cpp — one table of ops × input shapes × variants, each checked with a
// float64 full-Jacobian gradcheck: broadcasting both ways, size-1 dims, 0-d tensors,
// non-contiguous (transposed / permuted / sliced) inputs.
#include <functional>
#include <string>
#include <vector>

#include "support/gradcheck_catch.hpp"

using namespace tapegrad;
using tapegrad::testing::param;
using tapegrad::testing::positive_param;

namespace {

enum class Values { normal, positive };

struct CatalogEntry {
  std::string name;
  std::vector<Shape> shapes;
  Values values;
  GradcheckFn fn;
};

// A permuted view of a contiguous leaf: exercises the strided paths of every op.
Tensor noncontig(const Tensor& x) { return x.transpose(0, 1); }

std::vector<CatalogEntry> catalog() {
  using L = const TensorList&;
  return {
      // ---- binary, same shapes and broadcasting both ways
      {"add same shape", {{2, 3}, {2, 3}}, Values::normal, [](L in) { return add(in[0], in[1]); }},
      {"add broadcast row", {{2, 3}, {3}}, Values::normal, [](L in) { return add(in[0], in[1]); }},
      {"add broadcast both ways", {{2, 1, 3}, {4, 1}}, Values::normal, [](L in) { return add(in[0], in[1]); }},
      {"add 0-d", {{}, {2, 2}}, Values::normal, [](L in) { return add(in[0], in[1]); }},
      {"sub broadcast", {{3, 1}, {1, 4}}, Values::normal, [](L in) { return sub(in[0], in[1]); }},
      {"mul broadcast", {{2, 3, 1}, {3, 4}}, Values::normal, [](L in) { return mul(in[0], in[1]); }},
      {"mul non-contiguous", {{3, 2}, {2, 3}}, Values::normal, [](L in) { return mul(noncontig(in[0]), in[1]); }},
      {"mul same tensor twice", {{3}}, Values::normal, [](L in) { return mul(in[0], in[0]); }},
      {"div broadcast", {{2, 3}, {3}}, Values::positive, [](L in) { return div(in[0], in[1]); }},
      {"div by size-1", {{1, 3}, {2, 1}}, Values::positive, [](L in) { return div(in[0], in[1]); }},
      {"pow tensor", {{2, 3}, {3}}, Values::positive, [](L in) { return pow(in[0], in[1]); }},
      {"pow scalar", {{2, 3}}, Values::positive, [](L in) { return pow(in[0], 2.5); }},
      {"scalar forms", {{2, 2}}, Values::positive,
       [](L in) { return (2.0 - in[0]) * 3.0 + 1.0 / in[0] - in[0] / 4.0 + (in[0] + 1.0) - (-in[0]); }},
      // ---- unary
      {"exp", {{2, 3}}, Values::normal, [](L in) { return exp(in[0]); }},
      {"log", {{2, 3}}, Values::positive, [](L in) { return log(in[0]); }},
      {"sqrt", {{2, 3}}, Values::positive, [](L in) { return sqrt(in[0]); }},
      {"rsqrt", {{2, 3}}, Values::positive, [](L in) { return rsqrt(in[0]); }},
      {"abs", {{2, 3}}, Values::normal, [](L in) { return abs(in[0]); }},
      {"tanh", {{2, 3}}, Values::normal, [](L in) { return tanh(in[0]); }},
      {"sigmoid", {{2, 3}}, Values::normal, [](L in) { return sigmoid(in[0]); }},
      {"relu", {{2, 3}}, Values::normal, [](L in) { return relu(in[0]); }},
      {"gelu exact", {{2, 3}}, Values::normal, [](L in) { return gelu(in[0]); }},
      {"gelu tanh", {{2, 3}}, Values::normal, [](L in) { return gelu(in[0], "tanh"); }},
      {"silu", {{2, 3}}, Values::normal, [](L in) { return silu(in[0]); }},
      {"clamp both", {{3, 4}}, Values::normal, [](L in) { return clamp(in[0], -0.5, 0.5); }},
      {"clamp min only", {{3, 4}}, Values::normal, [](L in) { return clamp(in[0], 0.1, std::nullopt); }},
      {"unary non-contiguous", {{3, 2}}, Values::normal, [](L in) { return tanh(noncontig(in[0])); }},
      // ---- reductions
      {"sum all", {{2, 3}}, Values::normal, [](L in) { return sum(in[0]); }},
      {"sum dim", {{2, 3, 4}}, Values::normal, [](L in) { return sum(in[0], {1}); }},
      {"sum dims keepdim", {{2, 3, 4}}, Values::normal, [](L in) { return sum(in[0], {0, 2}, true); }},
      {"sum negative dim", {{2, 3}}, Values::normal, [](L in) { return sum(in[0], {-1}); }},
      {"sum non-contiguous", {{3, 2}}, Values::normal, [](L in) { return sum(noncontig(in[0]), {1}); }},
      {"sum 0-d", {{}}, Values::normal, [](L in) { return sum(in[0]); }},
      {"mean dims", {{2, 3, 4}}, Values::normal, [](L in) { return mean(in[0], {0, 2}); }},
      {"mean all", {{2, 3}}, Values::normal, [](L in) { return mean(in[0]); }},
      {"max dim", {{3, 4}}, Values::normal, [](L in) { return max(in[0], 1); }},
      {"max dim 0 keepdim", {{3, 4}}, Values::normal, [](L in) { return max(in[0], 0, true); }},
      {"max all", {{2, 3}}, Values::normal, [](L in) { return max(in[0]); }},
      {"var unbiased", {{3, 4}}, Values::normal, [](L in) { return var(in[0], {1}); }},
      {"var population all", {{2, 3}}, Values::normal, [](L in) { return var(in[0], {}, 0); }},
      {"var keepdim dims", {{2, 3, 2}}, Values::normal, [](L in) { return var(in[0], {0, 2}, 1, true); }},
      // ---- views
      {"reshape", {{2, 3}}, Values::normal, [](L in) { return mul(in[0].reshape({3, 2}), 2.0); }},
      {"reshape non-contiguous", {{2, 3}}, Values::normal, [](L in) { return noncontig(in[0]).reshape({-1}); }},
      {"view", {{2, 3}}, Values::normal, [](L in) { return in[0].view({6}) * 2.0; }},
      {"flatten", {{2, 3, 2}}, Values::normal, [](L in) { return flatten(in[0], 1); }},
      {"unsqueeze squeeze", {{2, 3}}, Values::normal, [](L in) { return squeeze(unsqueeze(in[0], 1) * 2.0, 1); }},
      {"transpose", {{2, 3}}, Values::normal, [](L in) { return in[0].transpose(0, 1) * 2.0; }},
      {"permute", {{2, 3, 4}}, Values::normal, [](L in) { return permute(in[0], {2, 0, 1}).contiguous(); }},
      {"expand", {{3, 1}}, Values::normal, [](L in) { return expand(in[0], {2, 3, 4}) * 1.0; }},
      {"narrow", {{4, 3}}, Values::normal, [](L in) { return narrow(in[0], 0, 1, 2) * 3.0; }},
      {"slice with step", {{5, 2}}, Values::normal, [](L in) { return slice(in[0], 0, 1, 5, 2) * 3.0; }},
      {"slice negative", {{5, 2}}, Values::normal, [](L in) { return slice(in[0], 0, -3, -1) * 3.0; }},
      {"clone", {{2, 2}}, Values::normal, [](L in) { return in[0].clone() * 2.0; }},
      // ---- matmul and linear
      {"matmul 2-d", {{2, 3}, {3, 4}}, Values::normal, [](L in) { return matmul(in[0], in[1]); }},
      {"matmul batched broadcast", {{2, 1, 2, 3}, {3, 3, 2}}, Values::normal, [](L in) { return matmul(in[0], in[1]); }},
      {"matmul 3-d @ 2-d", {{2, 2, 3}, {3, 2}}, Values::normal, [](L in) { return matmul(in[0], in[1]); }},
      {"matmul transposed view", {{3, 2}, {4, 3}}, Values::normal,
       [](L in) { return matmul(in[0].transpose(0, 1), in[1].transpose(0, 1)); }},
      {"matmul vector", {{3}, {3, 2}}, Values::normal, [](L in) { return matmul(in[0], in[1]); }},
      {"linear with bias", {{2, 2, 3}, {4, 3}, {4}}, Values::normal,
       [](L in) { return linear(in[0], in[1], in[2]); }},
      {"linear without bias", {{2, 3}, {4, 3}}, Values::normal, [](L in) { return linear(in[0], in[1]); }},
  };
}

}  // namespace

TEST_CASE("every op in the catalogue passes a float64 gradcheck", "[gradcheck][catalog]") {
  std::uint64_t seed = 1;
  for (const CatalogEntry& entry : catalog()) {
    SECTION(entry.name) {
      TensorList inputs;
      for (const Shape& shape : entry.shapes)
        inputs.push_back(entry.values == Values::positive ? positive_param(shape, seed++)
                                                          : param(shape, seed++));
      CHECK_GRADCHECK(entry.fn, inputs);
    }
  }
}

TEST_CASE("gradcheck reports a wrong backward with the worst element", "[gradcheck]") {
  // A deliberately wrong op: forward 2x, backward claims 3.
  auto wrong = [](const TensorList& in) {
    Tensor out = mul(in[0].detach(), 2.0);
    record(out, "wrong_double", {in[0]}, [](const Tensor& dout) -> TensorList { return {mul(dout, 3.0)}; });
    return out;
  };
  const GradcheckResult r = gradcheck(wrong, {param({2, 2}, 7)});
  CHECK_FALSE(r.ok);
  CHECK(r.max_abs_error == Approx(1.0).epsilon(1e-6));
  CHECK_THAT(r.report, Catch::Contains("input 0") && Catch::Contains("analytic gradient 3") &&
                           Catch::Contains("central difference gives 2"));
}

TEST_CASE("gradcheck refuses float32 inputs", "[gradcheck]") {
  Tensor x = ones({2}).requires_grad_();
  REQUIRE_THROWS_WITH(gradcheck([](const TensorList& in) { return in[0] * 2.0; }, {x}),
                      Catch::Contains("float64"));
}
