// test_op_catalog.cpp — one table of ops × input shapes × variants, each checked with a
// float64 full-Jacobian gradcheck and gradgradcheck (second derivatives): broadcasting both
// ways, size-1 dims, 0-d tensors, non-contiguous (transposed / permuted / sliced) inputs; and
// gradcheck's fast mode, a random projection of each Jacobian, on the same table; and forward
// mode, each jvp against central differences and against the transpose of the backward.
#include <cmath>
#include <cstdint>
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

// docs/adding-an-op.md's example op, the page's code as it is (tests/docs/test_adding_an_op_docs.cpp
// checks that the page shows this file): an op that follows the page passes the catalogue.
#include "../../docs/snippets/adding_an_op.inc"

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
      {"erf", {{2, 3}}, Values::normal, [](L in) { return erf(in[0]); }},
      {"erf non-contiguous", {{3, 2}}, Values::normal, [](L in) { return erf(noncontig(in[0])); }},
      {"clamp both", {{3, 4}}, Values::normal, [](L in) { return clamp(in[0], -0.5, 0.5); }},
      {"clamp min only", {{3, 4}}, Values::normal, [](L in) { return clamp(in[0], 0.1, std::nullopt); }},
      {"unary non-contiguous", {{3, 2}}, Values::normal, [](L in) { return tanh(noncontig(in[0])); }},
      {"swish, the example of docs/adding-an-op.md", {{2, 3}}, Values::normal, [](L in) { return swish(in[0]); }},
      {"swish non-contiguous", {{3, 2}}, Values::normal, [](L in) { return swish(noncontig(in[0])); }},
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
      {"linear non-contiguous input", {{3, 2}, {4, 3}}, Values::normal,
       [](L in) { return linear(noncontig(in[0]), in[1]); }},
      {"gelu_mlp", {{2, 3}, {4, 3}, {4}, {2, 4}, {2}}, Values::normal,
       [](L in) { return gelu_mlp(in[0], in[1], in[2], in[3], in[4], "tanh"); }},
      // ---- joins
      {"cat", {{2, 3}, {1, 3}}, Values::normal, [](L in) { return cat({in[0], in[1]}, 0); }},
      {"stack", {{2, 3}, {2, 3}}, Values::normal, [](L in) { return stack({in[0], in[1]}, 1); }},
      {"split and chunk", {{5, 2}}, Values::normal, [](L in) {
         const TensorList s = split(in[0], 2, 0);
         const TensorList c = chunk(in[0], 2, 1);
         return add(mul(s[2], narrow(c[1], 0, 0, 1)), sum(s[0]));
       }},
      // ---- indexing
      {"index_select repeated", {{4, 3}}, Values::normal,
       [](L in) { return index_select(in[0], 0, tensor({2, 0, 2}, {3}, DType::int64)); }},
      {"index_select inner dim", {{2, 4, 2}}, Values::normal,
       [](L in) { return index_select(in[0], 1, tensor({3, 3, 1}, {3}, DType::int64)); }},
      {"embedding", {{5, 3}}, Values::normal,
       [](L in) { return embedding(in[0], tensor({4, 1, 4, 0}, {2, 2}, DType::int64)); }},
      {"gather repeated indices", {{3, 4}}, Values::normal,
       [](L in) { return gather(in[0], 1, tensor({0, 3, 3, 1, 2, 2}, {3, 2}, DType::int64)); }},
      {"gather dim 0, smaller index", {{3, 4}}, Values::normal,
       [](L in) { return gather(in[0], 0, tensor({2, 0, 1, 2, 1, 1}, {2, 3}, DType::int64)); }},
      {"scatter_add repeated indices", {{3, 4}, {3, 2}}, Values::normal,
       [](L in) { return scatter_add(in[0], 1, tensor({0, 3, 3, 3, 2, 0}, {3, 2}, DType::int64), in[1]); }},
      {"topk values", {{3, 5}}, Values::normal, [](L in) { return topk(in[0], 2, 1).first; }},
      {"topk smallest along dim 0", {{4, 3}}, Values::normal, [](L in) { return topk(in[0], 3, 0, false).first; }},
      {"masked_fill broadcast mask", {{2, 3}}, Values::normal,
       [](L in) { return masked_fill(in[0], tensor({1, 0, 1}, {3}, DType::int64), -2.0); }},
      {"where broadcast", {{2, 3}, {3}}, Values::normal,
       [](L in) { return where(tensor({1, 0, 0, 1, 1, 0}, {2, 3}), in[0], in[1]); }},
      // ---- softmax
      {"softmax last dim", {{2, 4}}, Values::normal, [](L in) { return softmax(in[0], -1); }},
      {"softmax inner dim", {{2, 3, 2}}, Values::normal, [](L in) { return softmax(in[0], 1); }},
      {"log_softmax", {{3, 4}}, Values::normal, [](L in) { return log_softmax(in[0], 1); }},
      {"log_softmax non-contiguous", {{4, 3}}, Values::normal, [](L in) { return log_softmax(noncontig(in[0]), 1); }},
      // ---- losses
      {"cross_entropy mean with ignore_index", {{4, 3}}, Values::normal,
       [](L in) { return cross_entropy(in[0], tensor({2, -100, 0, 1}, {4}, DType::int64)); }},
      {"cross_entropy sum, label smoothing", {{3, 4}}, Values::normal, [](L in) {
         return cross_entropy(in[0], tensor({3, 0, 1}, {3}, DType::int64), Reduction::sum, -100, 0.2);
       }},
      {"cross_entropy none, (N, C, d) layout", {{2, 3, 2}}, Values::normal, [](L in) {
         return cross_entropy(in[0], tensor({0, 2, 1, 1}, {2, 2}, DType::int64), Reduction::none, 1, 0.1);
       }},
      {"cross_entropy one row (C)", {{5}}, Values::normal,
       [](L in) { return cross_entropy(in[0], tensor({3}, {}, DType::int64), Reduction::none, -100, 0.3); }},
      {"mse_loss", {{2, 3}, {2, 3}}, Values::normal, [](L in) { return mse_loss(in[0], in[1]); }},
      // ---- normalization
      {"layer_norm affine", {{2, 4}, {4}, {4}}, Values::normal,
       [](L in) { return layer_norm(in[0], {4}, in[1], in[2]); }},
      {"layer_norm two dims, no affine", {{2, 2, 3}}, Values::normal, [](L in) { return layer_norm(in[0], {2, 3}); }},
      {"layer_norm non-contiguous", {{4, 2}, {2}, {2}}, Values::normal,
       [](L in) { return layer_norm(noncontig(in[0]), {4}, tensor({1, 2, 3, 4}, {4}, DType::float64), Tensor()); }},
      {"rms_norm", {{3, 4}, {4}}, Values::normal, [](L in) { return rms_norm(in[0], {4}, in[1]); }},
      {"rms_norm no weight", {{2, 3}}, Values::normal, [](L in) { return rms_norm(in[0], {3}); }},
      // ---- attention and dropout (fixed generators: the function is the same at every call)
      {"attention", {{1, 2, 3, 2}, {1, 2, 4, 2}, {1, 2, 4, 3}}, Values::normal,
       [](L in) { return scaled_dot_product_attention(in[0], in[1], in[2]); }},
      {"attention causal, padding, a fully masked row", {{2, 1, 3, 2}, {2, 1, 3, 2}, {2, 1, 3, 2}}, Values::normal,
       [](L in) {
         AttentionOptions o;
         o.causal = true;
         o.key_padding_mask = tensor({0, 0, 1, 1, 0, 0}, {2, 3});  // batch 1: query 0 sees no key
         return scaled_dot_product_attention(in[0], in[1], in[2], o);
       }},
      {"attention dropout, custom scale", {{1, 2, 3, 2}, {1, 2, 3, 2}, {1, 2, 3, 2}}, Values::normal,
       [](L in) {
         Generator gen(5);
         AttentionOptions o;
         o.dropout_p = 0.3;
         o.training = true;
         o.gen = &gen;
         o.scale = 0.8;
         return scaled_dot_product_attention(in[0], in[1], in[2], o);
       }},
      {"attention transposed views", {{1, 3, 2, 2}, {1, 3, 2, 2}, {1, 3, 2, 2}}, Values::normal,
       [](L in) {
         return scaled_dot_product_attention(in[0].transpose(1, 2), in[1].transpose(1, 2), in[2].transpose(1, 2));
       }},
      {"attention flash kernel, causal, padding, grouped-query", {{2, 2, 3, 2}, {2, 1, 4, 2}, {2, 1, 4, 3}},
       Values::normal,
       [](L in) {
         AttentionOptions o;
         o.causal = true;
         o.causal_offset = 1;
         o.key_padding_mask = tensor({0, 0, 0, 1, 1, 1, 0, 0}, {2, 4});  // batch 1: query 0 sees no key
         o.kernel = AttentionKernel::flash;
         return scaled_dot_product_attention(in[0], in[1], in[2], o);
       }},
      {"self_attention_packed flash kernel, causal", {{2, 3, 12}}, Values::normal, [](L in) {
         AttentionOptions o;
         o.causal = true;
         o.kernel = AttentionKernel::flash;
         return self_attention_packed(in[0], 2, o);
       }},
      {"self_attention_packed causal, dropout", {{2, 3, 12}}, Values::normal, [](L in) {
         Generator gen(6);
         AttentionOptions o;
         o.causal = true;
         o.dropout_p = 0.25;
         o.training = true;
         o.gen = &gen;
         return self_attention_packed(in[0], 2, o);
       }},
      {"attention grouped-query (H 4, Hkv 2), causal, dropout", {{1, 4, 3, 2}, {1, 2, 3, 2}, {1, 2, 3, 2}},
       Values::normal,
       [](L in) {
         Generator gen(8);
         AttentionOptions o;
         o.causal = true;
         o.dropout_p = 0.2;
         o.training = true;
         o.gen = &gen;
         return scaled_dot_product_attention(in[0], in[1], in[2], o);
       }},
      {"attention multi-query cross, padding", {{2, 2, 3, 2}, {2, 1, 4, 2}, {2, 1, 4, 3}}, Values::normal,
       [](L in) {
         AttentionOptions o;
         o.key_padding_mask = tensor({0, 0, 0, 1, 0, 1, 1, 1}, {2, 4});
         return scaled_dot_product_attention(in[0], in[1], in[2], o);
       }},
      {"self_attention_packed grouped-query (H 4, Hkv 2), causal, padding", {{2, 3, 16}}, Values::normal, [](L in) {
         AttentionOptions o;
         o.causal = true;
         o.key_padding_mask = tensor({0, 0, 1, 0, 0, 0}, {2, 3});
         return self_attention_packed(in[0], 4, o, 2);
       }},
      {"self_attention_packed multi-query, dropout", {{1, 4, 10}}, Values::normal, [](L in) {
         Generator gen(9);
         AttentionOptions o;
         o.dropout_p = 0.3;
         o.training = true;
         o.gen = &gen;
         return self_attention_packed(in[0], 3, o, 1);
       }},
      {"attention causal_offset (bottom-right: Tq 2 after 2 cached keys), grouped-query, padding",
       {{2, 4, 2, 2}, {2, 2, 4, 2}, {2, 2, 4, 3}}, Values::normal, [](L in) {
         AttentionOptions o;
         o.causal = true;
         o.causal_offset = 2;
         o.key_padding_mask = tensor({0, 1, 0, 0, 0, 0, 0, 1}, {2, 4});
         return scaled_dot_product_attention(in[0], in[1], in[2], o);
       }},
      {"self_attention_packed causal_offset 1, dropout", {{1, 3, 12}}, Values::normal, [](L in) {
         Generator gen(10);
         AttentionOptions o;
         o.causal = true;
         o.causal_offset = 1;
         o.dropout_p = 0.2;
         o.training = true;
         o.gen = &gen;
         return self_attention_packed(in[0], 2, o);
       }},
      // ---- rotary position embedding
      {"rotary_embedding half split, offset", {{2, 3, 2, 4}}, Values::normal, [](L in) {
         RotaryOptions o;
         o.offset = 5;
         return rotary_embedding(in[0], o);
       }},
      {"rotary_embedding interleaved, theta 100, first head only, non-contiguous", {{1, 2, 3, 6}}, Values::normal,
       [](L in) {
         RotaryOptions o;
         o.interleaved = true;
         o.theta = 100;
         o.rotate_heads = 1;
         return rotary_embedding(in[0].transpose(1, 2), o);  // (1, 3, 2, 6)
       }},
      {"dropout", {{3, 4}}, Values::normal, [](L in) {
         Generator gen(7);
         return dropout(in[0], 0.4, true, &gen);
       }},
  };
}

// An entry's inputs: float64 leaves of its shapes, drawn with seeds 1, 2, ... (one section
// runs per pass of a TEST_CASE, so every entry starts from seed 1).
TensorList inputs_for(const CatalogEntry& entry) {
  std::uint64_t seed = 1;
  TensorList inputs;
  for (const Shape& shape : entry.shapes)
    inputs.push_back(entry.values == Values::positive ? positive_param(shape, seed++) : param(shape, seed++));
  return inputs;
}

// square(x) = x², with a backward that multiplies by a detached 2x: right first derivative,
// but recorded it is constant in x, so its second derivative comes out 0 instead of 2.
Tensor square_detached(const TensorList& in) {
  Tensor out = mul(in[0].detach(), in[0].detach());
  record(out, "square_detached", {in[0]}, [x = in[0].detach()](const Tensor& dout) -> TensorList {
    return {mul(dout, mul(x, 2.0))};
  }, DoubleBackward::supported);
  return out;
}

}  // namespace

TEST_CASE("every op in the catalogue passes a float64 gradcheck", "[gradcheck][catalog]") {
  for (const CatalogEntry& entry : catalog()) {
    SECTION(entry.name) { CHECK_GRADCHECK(entry.fn, inputs_for(entry)); }
  }
}

TEST_CASE("every op in the catalogue passes a float64 gradgradcheck", "[gradgradcheck][catalog]") {
  // Second derivatives: the backward of every op, recorded with create_graph, differentiated
  // again and compared with central differences of the first derivative.
  for (const CatalogEntry& entry : catalog()) {
    SECTION(entry.name) { CHECK_GRADGRADCHECK(entry.fn, inputs_for(entry)); }
  }
}

TEST_CASE("every op in the catalogue passes gradcheck and gradgradcheck in fast mode", "[gradcheck][catalog]") {
  // The sanitizer build checks every gradient in fast mode (support/gradcheck_catch.hpp): here,
  // in every build, no op fails it where the full Jacobian passes.
  GradcheckOptions fast;
  fast.fast_mode = true;
  for (const CatalogEntry& entry : catalog()) {
    SECTION(entry.name) {
      const GradcheckResult once = gradcheck(entry.fn, inputs_for(entry), fast);
      INFO(once.report);
      CHECK(once.ok);
      CHECK_THAT(once.report, Catch::Contains("gradcheck (fast mode) passed"));
      const GradcheckResult twice = gradgradcheck(entry.fn, inputs_for(entry), fast);
      INFO(twice.report);
      CHECK(twice.ok);
    }
  }
}

TEST_CASE("every op in the catalogue has a forward rule: jvp's columns equal central differences", "[forward_ad][catalog]") {
  // check_forward_ad: J·e_i by forward mode (jvp) for every input element, against the same
  // central differences as the backward's; then forward over reverse, through gradgradcheck.
  GradcheckOptions forward;
  forward.check_forward_ad = true;
  GradcheckOptions fast_forward = forward;
  fast_forward.fast_mode = true;
  for (const CatalogEntry& entry : catalog()) {
    SECTION(entry.name) {
      const GradcheckResult once = gradcheck(entry.fn, inputs_for(entry), forward);
      INFO(once.report);
      CHECK(once.ok);
      const GradcheckResult twice = gradgradcheck(entry.fn, inputs_for(entry), fast_forward);
      INFO(twice.report);
      CHECK(twice.ok);
    }
  }
}

TEST_CASE("every op in the catalogue: forward and reverse mode are transposes, <jvp(v), u> = <v, vjp(u)>",
          "[forward_ad][catalog]") {
  // J·v by one forward pass and uᵀJ by one backward pass, for random v and u: the two inner
  // products are the same number, uᵀ(J·v) = (uᵀJ)·v, to float64 rounding. A forward rule that
  // is not the transpose of its op's backward (a wrong sign, a missed broadcast, a dropped input)
  // breaks the equality even where both sides look plausible.
  for (const CatalogEntry& entry : catalog()) {
    SECTION(entry.name) {
      const TensorList x = inputs_for(entry);
      TensorList v;
      std::uint64_t seed = 1000;
      for (const Tensor& xi : x) v.push_back(param(xi.shape(), seed++).detach());
      const auto [y, jv] = jvp(entry.fn, x, v);
      const Tensor out = entry.fn(x);
      const Tensor u = param(out.shape(), 2000).detach();
      const TensorList vjp = grad({out}, x, {u}, {.allow_unused = true});
      const double lhs = sum(mul(jv, u)).item();
      double rhs = 0;
      for (std::size_t i = 0; i < x.size(); ++i)
        if (vjp[i].defined()) rhs += sum(mul(v[i], vjp[i])).item();
      INFO("<jvp(v), u> = " << lhs << ", <v, vjp(u)> = " << rhs);
      CHECK(lhs == Approx(rhs).epsilon(1e-12).margin(1e-13));
    }
  }
}

TEST_CASE("gradcheck's forward check catches a wrong forward rule, naming the element", "[forward_ad][gradcheck]") {
  // forward 2x, backward 2 (right), forward rule 3 (wrong)
  auto wrong = [](const TensorList& in) {
    Tensor out = mul(in[0].detach(), 2.0);
    record(out, "wrong_rule", {in[0]}, [](const Tensor& dout) -> TensorList { return {mul(dout, 2.0)}; });
    record_forward(out, [](const TensorList& t) { return mul(t[0], 3.0); });
    return out;
  };
  GradcheckOptions forward;
  forward.check_forward_ad = true;
  CHECK(gradcheck(wrong, {param({2, 2}, 7)}).ok);  // the backward alone is right
  const GradcheckResult r = gradcheck(wrong, {param({2, 2}, 7)}, forward);
  CHECK_FALSE(r.ok);
  CHECK_THAT(r.report, Catch::Contains("gradcheck failed (forward mode): input 0") && Catch::Contains("jvp gives 3") &&
                           Catch::Contains("central difference gives 2"));
  forward.fast_mode = true;
  CHECK_THAT(gradcheck(wrong, {param({2, 2}, 7)}, forward).report, Catch::Contains("forward mode) failed: input 0"));
}

TEST_CASE("gradgradcheck catches a backward whose first derivative is right and second wrong", "[gradgradcheck]") {
  // square_detached: right first derivative, second derivative 0 instead of 2.
  const GradcheckFn square = square_detached;
  CHECK_GRADCHECK(square, {param({3}, 3)});
  const GradcheckResult r = gradgradcheck(square, {param({3}, 3)});
  CHECK_FALSE(r.ok);
  CHECK_THAT(r.report, Catch::Contains("gradgradcheck failed"));
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

TEST_CASE("gradcheck's fast mode catches a wrong backward, even in one Jacobian entry", "[gradcheck]") {
  GradcheckOptions fast;
  fast.fast_mode = true;
  // Forward 2x, backward 3: every entry wrong.
  auto wrong = [](const TensorList& in) {
    Tensor out = mul(in[0].detach(), 2.0);
    record(out, "wrong_double", {in[0]}, [](const Tensor& dout) -> TensorList { return {mul(dout, 3.0)}; });
    return out;
  };
  const GradcheckResult r = gradcheck(wrong, {param({2, 2}, 7), param({3}, 8)}, fast);
  CHECK_FALSE(r.ok);
  CHECK_THAT(r.report, Catch::Contains("gradcheck (fast mode) failed: input 0 (shape [2, 2])") &&
                           Catch::Contains("without fast_mode"));
  // The identity on 3 × 4 elements with ∂out/∂in of element [1, 2] given as 1.5 instead of 1:
  // one entry of 144 wrong. (The projection mixes all entries, so it tolerates rtol of their
  // weighted sum: an entry off by a few percent could pass.)
  auto one_entry = [](const TensorList& in) {
    Tensor out = in[0].detach().clone();
    record(out, "one_wrong_entry", {in[0]}, [](const Tensor& dout) -> TensorList {
      Tensor g = dout.clone();
      g.data<double>()[1 * 4 + 2] *= 1.5;
      return {g};
    });
    return out;
  };
  CHECK_FALSE(gradcheck(one_entry, {param({3, 4}, 9)}, fast).ok);
  CHECK_FALSE(gradcheck(one_entry, {param({3, 4}, 9)}).ok);
  // The square whose recorded backward is constant in x: right first, wrong second derivative.
  const GradcheckFn square = square_detached;
  CHECK(gradcheck(square, {param({3}, 3)}, fast).ok);
  const GradcheckResult twice = gradgradcheck(square, {param({3}, 3)}, fast);
  CHECK_FALSE(twice.ok);
  CHECK_THAT(twice.report, Catch::Contains("gradgradcheck failed (gradcheck (fast mode) failed"));
}

TEST_CASE("gradcheck refuses float32 inputs", "[gradcheck]") {
  Tensor x = ones({2}).requires_grad_();
  REQUIRE_THROWS_WITH(gradcheck([](const TensorList& in) { return in[0] * 2.0; }, {x}),
                      Catch::Contains("float64"));
}
