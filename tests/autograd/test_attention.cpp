// test_attention.cpp — the fused scaled_dot_product_attention against its composition from
// primitive ops (matmul, masked_fill, softmax, mul), forward and the three input gradients, for
// every mask variant; float64 gradcheck; fully masked rows; dropout (reproducible, eval mode,
// the documented per-pair seeds, thread count); float32 vs float64; error messages.
#include <cmath>
#include <string>

#include "support/gradcheck_catch.hpp"
#include "support/attention_grads.hpp"
#include "support/reference.hpp"

using namespace tapegrad;
using tapegrad::testing::AttentionGrads;
using tapegrad::testing::check_same_grads;
using tapegrad::testing::compare_tensors;
using tapegrad::testing::run_with_grads;
using tapegrad::testing::param;

namespace {

// One attention problem: shapes and options.
struct Case {
  std::string name;
  std::int64_t B, H, Tq, Tk, D, Dv;
  bool causal = false;
  bool pad = false;  // pads the last keys: 1 in batch 0, 2 in batch 1, ... (never all of them)
  std::optional<double> scale = std::nullopt;
};

// (B, Tk) int64: batch b pads its last min(b + 1, Tk - 1) keys.
Tensor padding_mask(std::int64_t B, std::int64_t Tk) {
  std::vector<double> m(B * Tk, 0.0);
  for (std::int64_t b = 0; b < B; ++b)
    for (std::int64_t j = std::max<std::int64_t>(Tk - (b + 1), 1); j < Tk; ++j) m[b * Tk + j] = 1;
  return tensor(m, {B, Tk}, DType::int64);
}

AttentionOptions options_for(const Case& c) {
  AttentionOptions o;
  o.causal = c.causal;
  if (c.pad) o.key_padding_mask = padding_mask(c.B, c.Tk);
  o.scale = c.scale;
  return o;
}

// The textbook composition the fused op replaces. Hidden scores get -1e30 rather than -inf, and
// rows with no visible key are multiplied by 0 afterwards: that gives the fused op's "fully
// masked row = 0" (softmax of an all -inf row is NaN). keep_mask (B, H, Tq, Tk), if defined,
// is the scaled dropout mask.
Tensor naive_attention(const Tensor& q, const Tensor& k, const Tensor& v, const AttentionOptions& o,
                       const Tensor& keep_mask = Tensor()) {
  const std::int64_t B = q.size(0), Tq = q.size(2), Tk = k.size(2), D = q.size(3);
  const std::vector<double> pad = o.key_padding_mask.defined() ? o.key_padding_mask.to_vector<double>()
                                                                : std::vector<double>(B * Tk, 0.0);
  std::vector<double> hidden(B * Tq * Tk), row_valid(B * Tq, 0.0);
  for (std::int64_t b = 0; b < B; ++b)
    for (std::int64_t i = 0; i < Tq; ++i)
      for (std::int64_t j = 0; j < Tk; ++j) {
        const bool h = (o.causal && j > i) || pad[b * Tk + j] != 0;
        hidden[(b * Tq + i) * Tk + j] = h;
        if (!h) row_valid[b * Tq + i] = 1;
      }
  const double scale = o.scale.value_or(1.0 / std::sqrt(static_cast<double>(D)));
  Tensor s = mul(matmul(q, transpose(k, -2, -1)), scale);  // (B, H, Tq, Tk)
  s = masked_fill(s, tensor(hidden, {B, 1, Tq, Tk}, DType::int64), -1e30);
  Tensor p = mul(softmax(s, -1), tensor(row_valid, {B, 1, Tq, 1}, q.dtype()));
  if (keep_mask.defined()) p = mul(p, keep_mask);
  return matmul(p, v);
}

// The scaled dropout mask the op documents: one seed per (b, h) pair drawn in order from the
// generator, then one uniform per score in row-major order from a Generator with that seed.
Tensor expected_keep_mask(std::uint64_t seed, std::int64_t B, std::int64_t H, std::int64_t Tq,
                          std::int64_t Tk, double p, DType dtype) {
  Generator gen(seed);
  std::vector<double> m;
  for (std::int64_t pair = 0; pair < B * H; ++pair) {
    Generator local(gen.next_u64());
    for (std::int64_t i = 0; i < Tq * Tk; ++i) m.push_back(local.next_double() >= p ? 1.0 / (1.0 - p) : 0.0);
  }
  return tensor(m, {B, H, Tq, Tk}, dtype);
}

// Rows [i0, i0 + n) of dim 2 (queries or keys) of batch b; all of them by default.
Tensor rows(const Tensor& t, std::int64_t b, std::int64_t i0 = 0, std::int64_t n = -1) {
  return narrow(narrow(t, 0, b, 1), 2, i0, n < 0 ? t.size(2) : n);
}

bool all_zero(const Tensor& t) {
  for (double x : t.to_vector()) if (x != 0.0) return false;
  return true;
}

}  // namespace

TEST_CASE("fused attention matches the naive composition, forward and gradients", "[attention]") {
  const std::vector<Case> cases = {
      {"no mask, B=1, H=1", 1, 1, 5, 5, 4, 4},
      {"no mask, B=2, H=3", 2, 3, 5, 5, 4, 4},
      {"causal", 2, 3, 6, 6, 4, 4, true},
      {"key padding mask", 2, 3, 6, 6, 4, 4, false, true},
      {"causal and key padding", 2, 3, 6, 6, 4, 4, true, true},
      {"cross-attention Tq < Tk with padding", 2, 2, 3, 7, 4, 4, false, true},
      {"cross-attention causal Tq > Tk", 1, 2, 7, 3, 4, 4, true},
      {"cross-attention causal Tq < Tk", 2, 1, 3, 7, 4, 4, true, true},
      {"Dv != D", 2, 3, 5, 6, 4, 7},
      {"custom scale", 2, 2, 4, 4, 3, 3, true, false, 0.3},
      // More than kParallelGrain: takes the OpenMP path over the 24 (b, h) pairs.
      {"threaded: B=4, H=6, T=48", 4, 6, 48, 48, 16, 8, true, true},
      // Causal products in blocks of 64 query rows / key columns, the last block partial.
      {"causal blocks T=150", 1, 2, 150, 150, 4, 3, true},
      {"causal blocks T=150 with padding", 2, 1, 150, 150, 4, 3, true, true},
      {"causal blocks Tq=150 > Tk=100", 1, 1, 150, 100, 4, 3, true},
      {"causal blocks Tq=100 < Tk=150", 1, 1, 100, 150, 4, 3, true},
      // From 64 queries on, the products read staged copies, in chunks of at most 100³
      // multiply-adds (small_gemm.hpp): at D = 64 the 300 keys and queries split in two.
      {"staged, chunked: causal T=300, D=64", 1, 1, 300, 300, 64, 64, true},
      {"staged, chunked: no mask, padding, Tq=260, Tk=270, Dv=48", 2, 1, 260, 270, 64, 48, false, true},
      {"staged: no mask, Tq=64 < Tk=90", 1, 2, 64, 90, 4, 5},
  };
  for (const Case& c : cases) {
    INFO(c.name);
    Generator gen(11);
    const Tensor q = randn({c.B, c.H, c.Tq, c.D}, gen, DType::float64);
    const Tensor k = randn({c.B, c.H, c.Tk, c.D}, gen, DType::float64);
    const Tensor v = randn({c.B, c.H, c.Tk, c.Dv}, gen, DType::float64);
    const Tensor dout = randn({c.B, c.H, c.Tq, c.Dv}, gen, DType::float64);
    const AttentionOptions o = options_for(c);
    const AttentionGrads fused = run_with_grads(
        [&](const Tensor& a, const Tensor& b, const Tensor& d) { return scaled_dot_product_attention(a, b, d, o); },
        q, k, v, dout);
    const AttentionGrads naive = run_with_grads(
        [&](const Tensor& a, const Tensor& b, const Tensor& d) { return naive_attention(a, b, d, o); }, q, k, v,
        dout);
    CHECK(fused.out.shape() == Shape{c.B, c.H, c.Tq, c.Dv});
    check_same_grads(fused, naive, 1e-12);
  }
}

TEST_CASE("attention passes float64 gradcheck for every mask variant", "[attention]") {
  using L = const TensorList&;
  const std::vector<Case> cases = {
      {"no mask", 1, 2, 3, 4, 2, 3},
      {"causal", 2, 1, 4, 4, 3, 2, true},
      {"key padding mask", 2, 1, 3, 4, 2, 3, false, true},
      {"causal and key padding", 2, 1, 4, 4, 2, 3, true, true},
      {"cross-attention causal Tq > Tk", 1, 2, 4, 2, 3, 2, true},
      {"custom scale", 1, 2, 3, 3, 2, 2, false, false, 1.7},
  };
  for (const Case& c : cases) {
    INFO(c.name);
    const AttentionOptions o = options_for(c);
    CHECK_GRADCHECK([o](L in) { return scaled_dot_product_attention(in[0], in[1], in[2], o); },
                    {param({c.B, c.H, c.Tq, c.D}, 1), param({c.B, c.H, c.Tk, c.D}, 2),
                     param({c.B, c.H, c.Tk, c.Dv}, 3)});
  }
  SECTION("inputs that are views: transposed (B, T, H, D), last dim strided, expanded heads") {
    // q, k, v of shape (B, T, H, D) seen as (B, H, T, D): read in place through the strides
    CHECK_GRADCHECK([](L in) {
      return scaled_dot_product_attention(in[0].transpose(1, 2), in[1].transpose(1, 2), in[2].transpose(1, 2));
    }, {param({1, 3, 2, 2}, 4), param({1, 4, 2, 2}, 5), param({1, 4, 2, 3}, 6)});
    // k stored as (B, H, D, Tk): its last dim is not contiguous, so it is copied
    CHECK_GRADCHECK([](L in) { return scaled_dot_product_attention(in[0], in[1].transpose(2, 3), in[2]); },
                    {param({1, 2, 3, 2}, 7), param({1, 2, 2, 4}, 8), param({1, 2, 4, 2}, 9)});
    // one k, v shared by all heads (stride 0 over H): the gradient sums over heads
    CHECK_GRADCHECK([](L in) {
      return scaled_dot_product_attention(in[0], expand(in[1], {1, 3, 4, 2}), expand(in[2], {1, 3, 4, 2}));
    }, {param({1, 3, 2, 2}, 10), param({1, 1, 4, 2}, 11), param({1, 1, 4, 2}, 12)});
  }
}

TEST_CASE("attention reads non-contiguous inputs like their contiguous copies", "[attention]") {
  Generator gen(3);
  const Tensor x = randn({2, 6, 3, 4}, gen, DType::float64);  // (B, T, H, D)
  const Tensor qv = x.transpose(1, 2);                       // (B, H, T, D), not contiguous
  REQUIRE_FALSE(qv.is_contiguous());
  AttentionOptions o;
  o.causal = true;
  const Tensor dout = randn({2, 3, 6, 4}, gen, DType::float64);
  const AttentionGrads strided = run_with_grads(
      [&](const Tensor& a, const Tensor& b, const Tensor& d) {
        return scaled_dot_product_attention(a.transpose(1, 2), b.transpose(1, 2), d.transpose(1, 2), o);
      }, x, x * 0.5, x * -1.0, dout);
  const AttentionGrads copied = run_with_grads(
      [&](const Tensor& a, const Tensor& b, const Tensor& d) {
        return scaled_dot_product_attention(a.transpose(1, 2).contiguous(), b.transpose(1, 2).contiguous(),
                                            d.transpose(1, 2).contiguous(), o);
      }, x, x * 0.5, x * -1.0, dout);
  check_same_grads(strided, copied, 0.0);
}

TEST_CASE("a query row whose keys are all masked outputs zeros and gets no gradient", "[attention]") {
  Generator gen(5);
  const Tensor q = randn({2, 2, 3, 2}, gen, DType::float64);
  const Tensor k = randn({2, 2, 3, 2}, gen, DType::float64);
  const Tensor v = randn({2, 2, 3, 2}, gen, DType::float64);
  const Tensor dout = randn({2, 2, 3, 2}, gen, DType::float64);
  AttentionOptions o;
  // batch 0: only key 0 is padded, so with causal masking its query 0 sees nothing;
  // batch 1: every key is padded.
  o.causal = true;
  o.key_padding_mask = tensor({1, 0, 0, 1, 1, 1}, {2, 3}, DType::int64);
  const AttentionGrads fused = run_with_grads(
      [&](const Tensor& a, const Tensor& b, const Tensor& d) { return scaled_dot_product_attention(a, b, d, o); },
      q, k, v, dout);
  CHECK(all_zero(rows(fused.out, 1)));
  CHECK(all_zero(rows(fused.out, 0, 0, 1)));  // batch 0, query 0
  CHECK_FALSE(all_zero(rows(fused.out, 0, 1, 2)));
  CHECK(all_zero(rows(fused.dq, 1)));
  CHECK(all_zero(rows(fused.dq, 0, 0, 1)));
  CHECK(all_zero(rows(fused.dk, 1)));
  CHECK(all_zero(rows(fused.dv, 1)));
  CHECK(all_zero(rows(fused.dv, 0, 0, 1)));  // the padded key 0 of batch 0
  // The rows that see some key agree with the composition.
  const AttentionGrads naive = run_with_grads(
      [&](const Tensor& a, const Tensor& b, const Tensor& d) { return naive_attention(a, b, d, o); }, q, k, v, dout);
  check_same_grads(fused, naive, 1e-12);
  CHECK_GRADCHECK([o](const TensorList& in) { return scaled_dot_product_attention(in[0], in[1], in[2], o); },
                  {param({2, 1, 3, 2}, 1), param({2, 1, 3, 2}, 2), param({2, 1, 3, 2}, 3)});
  SECTION("no keys at all (Tk = 0)") {
    const Tensor out = scaled_dot_product_attention(param({1, 2, 3, 2}, 4), param({1, 2, 0, 2}, 5),
                                                    param({1, 2, 0, 4}, 6));
    CHECK(out.shape() == Shape{1, 2, 3, 4});
    CHECK(all_zero(out));
  }
}

TEST_CASE("rows with no visible key beside rows with some, across the softmax's row groups", "[attention]") {
  // The materialized forward takes score rows 16 at a time through each step (softmax_rows):
  // T = 37 makes groups of 16, 16 and 5. Batch 0 pads keys 0..20, so under the causal mask its
  // queries 0..20 see no key: a whole group, then part of the next beside rows that see keys.
  const std::int64_t T = 37, masked = 21;
  Generator gen(23);
  const Tensor q = randn({2, 2, T, 4}, gen, DType::float64);
  const Tensor k = randn({2, 2, T, 4}, gen, DType::float64);
  const Tensor v = randn({2, 2, T, 3}, gen, DType::float64);
  const Tensor dout = randn({2, 2, T, 3}, gen, DType::float64);
  std::vector<double> pad(2 * T, 0.0);
  std::fill(pad.begin(), pad.begin() + masked, 1.0);
  AttentionOptions o;
  o.causal = true;
  o.kernel = AttentionKernel::materialized;
  o.key_padding_mask = tensor(pad, {2, T}, DType::int64);
  const AttentionGrads fused = run_with_grads(
      [&](const Tensor& a, const Tensor& b, const Tensor& d) { return scaled_dot_product_attention(a, b, d, o); },
      q, k, v, dout);
  CHECK(all_zero(rows(fused.out, 0, 0, masked)));
  CHECK(all_zero(rows(fused.dq, 0, 0, masked)));
  for (std::int64_t i = masked; i < T; ++i) CHECK_FALSE(all_zero(rows(fused.out, 0, i, 1)));
  const AttentionGrads naive = run_with_grads(
      [&](const Tensor& a, const Tensor& b, const Tensor& d) { return naive_attention(a, b, d, o); }, q, k, v, dout);
  check_same_grads(fused, naive, 1e-12);
}

TEST_CASE("attention dropout is reproducible and follows the documented per-pair seeds", "[attention][dropout]") {
  const std::int64_t B = 2, H = 3, Tq = 4, Tk = 5, D = 3, Dv = 2;
  Generator data_gen(17);
  const Tensor q = randn({B, H, Tq, D}, data_gen, DType::float64);
  const Tensor k = randn({B, H, Tk, D}, data_gen, DType::float64);
  const Tensor v = randn({B, H, Tk, Dv}, data_gen, DType::float64);
  const Tensor dout = randn({B, H, Tq, Dv}, data_gen, DType::float64);
  auto with_dropout = [&](Generator* gen, double p, bool training) {
    AttentionOptions o;
    o.causal = true;
    o.dropout_p = p;
    o.training = training;
    o.gen = gen;
    return scaled_dot_product_attention(q, k, v, o);
  };
  const Tensor plain = with_dropout(nullptr, 0.0, false);

  SECTION("same seed, same output; another seed, another output") {
    Generator g1(42), g2(42), g3(43);
    const Tensor a = with_dropout(&g1, 0.5, true), b = with_dropout(&g2, 0.5, true), c = with_dropout(&g3, 0.5, true);
    CHECK_CLOSE("same seed", a, b, 0.0, 0.0);
    CHECK_FALSE(compare_tensors("other seed", a, c, 1e-6, 0.0).ok);
    CHECK_FALSE(compare_tensors("vs no dropout", a, plain, 1e-6, 0.0).ok);
    // Without gen, the default generator: manual_seed makes it repeatable.
    manual_seed(7);
    const Tensor d1 = with_dropout(nullptr, 0.5, true);
    manual_seed(7);
    CHECK_CLOSE("default generator", with_dropout(nullptr, 0.5, true), d1, 0.0, 0.0);
  }
  SECTION("eval mode ignores dropout and draws nothing; p = 0 equals no dropout") {
    Generator g(42);
    const std::uint64_t before = g.get_state().state;
    CHECK_CLOSE("eval", with_dropout(&g, 0.5, false), plain, 0.0, 0.0);
    CHECK_CLOSE("p = 0", with_dropout(&g, 0.0, true), plain, 0.0, 0.0);
    CHECK(g.get_state().state == before);
  }
  SECTION("forward and gradients equal the composition with the documented mask") {
    const double p = 0.3;
    const Tensor keep = expected_keep_mask(42, B, H, Tq, Tk, p, DType::float64);
    AttentionOptions o;
    o.causal = true;
    const AttentionGrads fused = run_with_grads(
        [&](const Tensor& a, const Tensor& b, const Tensor& d) {
          Generator g(42);
          AttentionOptions od = o;
          od.dropout_p = p;
          od.training = true;
          od.gen = &g;
          return scaled_dot_product_attention(a, b, d, od);
        }, q, k, v, dout);
    const AttentionGrads naive = run_with_grads(
        [&](const Tensor& a, const Tensor& b, const Tensor& d) { return naive_attention(a, b, d, o, keep); }, q, k,
        v, dout);
    check_same_grads(fused, naive, 1e-12);
  }
  SECTION("gradcheck with dropout on (the generator is reseeded at every evaluation)") {
    CHECK_GRADCHECK([](const TensorList& in) {
      Generator g(9);
      AttentionOptions o;
      o.dropout_p = 0.4;
      o.training = true;
      o.gen = &g;
      o.key_padding_mask = padding_mask(2, 3);
      return scaled_dot_product_attention(in[0], in[1], in[2], o);
    }, {param({2, 1, 3, 2}, 1), param({2, 1, 3, 2}, 2), param({2, 1, 3, 2}, 3)});
  }
}

TEST_CASE("attention dropout does not depend on the number of threads", "[attention][dropout]") {
  // Large enough for the OpenMP path over the 12 (b, h) pairs.
  Generator data_gen(23);
  const Tensor q = randn({2, 6, 32, 16}, data_gen), k = randn({2, 6, 32, 16}, data_gen),
               v = randn({2, 6, 32, 16}, data_gen), dout = randn({2, 6, 32, 16}, data_gen);
  auto run = [&] {
    return run_with_grads(
        [&](const Tensor& a, const Tensor& b, const Tensor& d) {
          Generator g(5);
          AttentionOptions o;
          o.dropout_p = 0.2;
          o.training = true;
          o.gen = &g;
          return scaled_dot_product_attention(a, b, d, o);
        }, q, k, v, dout);
  };
  const int threads = get_num_threads();
  const AttentionGrads many = run();
  set_num_threads(1);
  const AttentionGrads one = run();
  set_num_threads(threads);
  check_same_grads(many, one, 1e-6);
}

TEST_CASE("attention in float32 agrees with float64", "[attention]") {
  Generator gen(29);
  const Tensor q = randn({2, 3, 16, 8}, gen, DType::float64), k = randn({2, 3, 20, 8}, gen, DType::float64);
  const Tensor v = randn({2, 3, 20, 6}, gen, DType::float64), dout = randn({2, 3, 16, 6}, gen, DType::float64);
  AttentionOptions o;
  o.causal = true;
  o.key_padding_mask = padding_mask(2, 20);
  auto fn = [&](const Tensor& a, const Tensor& b, const Tensor& d) { return scaled_dot_product_attention(a, b, d, o); };
  const AttentionGrads f64 = run_with_grads(fn, q, k, v, dout);
  const AttentionGrads f32 = run_with_grads(fn, q.to(DType::float32), k.to(DType::float32), v.to(DType::float32),
                                   dout.to(DType::float32));
  CHECK(f32.out.dtype() == DType::float32);
  CHECK(f32.dq.dtype() == DType::float32);
  CHECK(f32.dk.dtype() == DType::float32);
  CHECK(f32.dv.dtype() == DType::float32);
  check_same_grads(f32, f64, 1e-5);
}

TEST_CASE("attention computes only the gradients that are needed", "[attention]") {
  Generator gen(31);
  const Tensor q = randn({1, 2, 3, 2}, gen, DType::float64), k = randn({1, 2, 3, 2}, gen, DType::float64);
  Tensor v = randn({1, 2, 3, 2}, gen, DType::float64).requires_grad_();
  scaled_dot_product_attention(q, k, v).sum().backward();
  const AttentionGrads full = run_with_grads(
      [](const Tensor& a, const Tensor& b, const Tensor& d) { return scaled_dot_product_attention(a, b, d); }, q, k,
      v, ones({1, 2, 3, 2}, DType::float64));
  CHECK_CLOSE("dv alone", v.grad(), full.dv, 1e-15, 0.0);
  // Only q: dS is needed but not dV.
  Tensor q_leaf = q.detach().clone().requires_grad_();
  scaled_dot_product_attention(q_leaf, k, v.detach()).sum().backward();
  CHECK_CLOSE("dq alone", q_leaf.grad(), full.dq, 1e-15, 0.0);
  // No input requires grad: nothing is recorded.
  CHECK(scaled_dot_product_attention(q, k, v.detach()).grad_fn() == nullptr);
}

TEST_CASE("attention errors name the op and the shapes", "[attention][errors]") {
  const Tensor q = zeros({2, 3, 4, 5}), k = zeros({2, 3, 6, 5}), v = zeros({2, 3, 6, 7});
  using Catch::Contains;
  REQUIRE_THROWS_AS(scaled_dot_product_attention(zeros({3, 4, 5}), k, v), ShapeError);
  REQUIRE_THROWS_WITH(scaled_dot_product_attention(zeros({3, 4, 5}), k, v),
                      Contains("scaled_dot_product_attention: q, k and v must be 4-d") && Contains("q [3, 4, 5]"));
  // grouped-query attention: Hkv must divide H (2 does not divide 3), and k and v share it
  REQUIRE_THROWS_WITH(scaled_dot_product_attention(q, zeros({2, 2, 6, 5}), zeros({2, 2, 6, 7})),
                      Contains("it must divide q's H") && Contains("k [2, 2, 6, 5]"));
  REQUIRE_THROWS_WITH(scaled_dot_product_attention(q, k, zeros({2, 1, 6, 7})),
                      Contains("k and v must have the same number of heads Hkv") && Contains("v [2, 1, 6, 7]"));
  REQUIRE_THROWS_WITH(scaled_dot_product_attention(q, k, zeros({1, 3, 6, 7})),
                      Contains("same batch size B") && Contains("v [1, 3, 6, 7]"));
  REQUIRE_THROWS_WITH(scaled_dot_product_attention(q, zeros({2, 3, 6, 4}), v),
                      Contains("q and k must have the same head dim D") && Contains("k [2, 3, 6, 4]"));
  REQUIRE_THROWS_WITH(scaled_dot_product_attention(q, k, zeros({2, 3, 5, 7})),
                      Contains("k and v must have the same number of keys Tk") && Contains("v [2, 3, 5, 7]"));
  REQUIRE_THROWS_AS(scaled_dot_product_attention(q, k.to(DType::float64), v), DTypeError);
  REQUIRE_THROWS_WITH(scaled_dot_product_attention(q, k.to(DType::float64), v),
                      Contains("must all be float32 or all float64, got float32, float64 and float32"));
  AttentionOptions o;
  o.key_padding_mask = zeros({2, 5});
  REQUIRE_THROWS_AS(scaled_dot_product_attention(q, k, v, o), ShapeError);
  REQUIRE_THROWS_WITH(scaled_dot_product_attention(q, k, v, o),
                      Contains("key_padding_mask must have shape (B, Tk) = [2, 6], got [2, 5]"));
  for (double p : {-0.1, 1.0, std::nan("")}) {
    AttentionOptions od;
    od.dropout_p = p;
    REQUIRE_THROWS_AS(scaled_dot_product_attention(q, k, v, od), ValueError);
    REQUIRE_THROWS_WITH(scaled_dot_product_attention(q, k, v, od), Contains("dropout_p must be in [0, 1)"));
  }
}

namespace {
// The split-attend-merge composition that self_attention_packed replaces.
Tensor split_attend_merge(const Tensor& qkv, std::int64_t H, const AttentionOptions& o) {
  const std::int64_t B = qkv.size(0), T = qkv.size(1), C = qkv.size(2) / 3, D = C / H;
  const Tensor parts = permute(qkv.reshape({B, T, 3, H, D}), {2, 0, 3, 1, 4});  // (3, B, H, T, D)
  auto part = [&](std::int64_t i) { return squeeze(narrow(parts, 0, i, 1), 0); };
  const Tensor heads = scaled_dot_product_attention(part(0), part(1), part(2), o);  // (B, H, T, D)
  return heads.transpose(1, 2).reshape({B, T, C});
}
}  // namespace

TEST_CASE("packed self-attention equals split, attend, merge, forward, gradient, gradcheck", "[attention]") {
  Generator gen(11);
  for (const bool causal : {false, true})
    for (const bool pad : {false, true}) {
      const std::int64_t B = 2, T = 5, H = 2, D = 3;
      AttentionOptions o;
      o.causal = causal;
      if (pad) o.key_padding_mask = padding_mask(B, T);
      INFO("causal " << causal << ", pad " << pad);
      const Tensor qkv = randn({B, T, 3 * H * D}, gen, DType::float64);
      const Tensor dout = randn({B, T, H * D}, gen, DType::float64);
      Tensor a = qkv.clone().requires_grad_(), b = qkv.clone().requires_grad_();
      const Tensor out_a = self_attention_packed(a, H, o), out_b = split_attend_merge(b, H, o);
      out_a.backward(dout);
      out_b.backward(dout);
      CHECK_CLOSE("out", out_a.detach(), out_b.detach(), 1e-12, 1e-12);
      CHECK_CLOSE("dqkv", a.grad(), b.grad(), 1e-12, 1e-12);
      CHECK_GRADCHECK([H, o](const TensorList& in) { return self_attention_packed(in[0], H, o); },
                      {qkv.clone().requires_grad_()});
    }
  // float32 agrees with float64
  const Tensor x = randn({2, 4, 12}, gen, DType::float64);
  CHECK_CLOSE("float32", self_attention_packed(x.to(DType::float32), 2).to(DType::float64),
              self_attention_packed(x, 2), 1e-5, 1e-4);
}

TEST_CASE("packed self-attention dropout draws the masks of the 4-d op", "[attention][dropout]") {
  Generator data(3);
  const Tensor qkv = randn({2, 4, 12}, data, DType::float64);
  AttentionOptions o;
  o.dropout_p = 0.3;
  o.training = true;
  Generator g1(5), g2(5);
  o.gen = &g1;
  const Tensor a = self_attention_packed(qkv, 2, o);
  o.gen = &g2;
  CHECK_CLOSE("dropout", a, split_attend_merge(qkv, 2, o), 1e-12, 1e-12);
}

TEST_CASE("packed self-attention errors name the op and the shapes", "[attention][errors]") {
  const Tensor x = zeros({2, 4, 12}, DType::float32);
  CHECK_THROWS_WITH(self_attention_packed(x, 5), Catch::Contains("self_attention_packed") && Catch::Contains("[2, 4, 12]"));
  CHECK_THROWS_AS(self_attention_packed(zeros({4, 12}, DType::float32), 2), ShapeError);
  AttentionOptions o;
  o.key_padding_mask = zeros({2, 3}, DType::int64);
  CHECK_THROWS_WITH(self_attention_packed(x, 2, o), Catch::Contains("key_padding_mask"));
}

TEST_CASE("grouped-query and multi-query attention match PyTorch's repeated kv heads", "[attention][gqa][reference]") {
  const auto& ref = tapegrad::testing::ops_reference();
  for (const char* name : {"gqa", "mqa"}) {
    DYNAMIC_SECTION(name) {
      const std::string p = std::string("attention.") + name + ".";
      Tensor q = ref.get(p + "q").requires_grad_(), k = ref.get(p + "k").requires_grad_(),
             v = ref.get(p + "v").requires_grad_();
      AttentionOptions o;
      o.causal = true;
      const Tensor y = scaled_dot_product_attention(q, k, v, o);
      CHECK_CLOSE("y", y, ref.get(p + "y"), 1e-12, 1e-12);
      y.backward(ref.get(p + "dout"));
      CHECK_CLOSE("dq", q.grad(), ref.get(p + "dq"), 1e-12, 1e-12);
      CHECK_CLOSE("dk", k.grad(), ref.get(p + "dk"), 1e-12, 1e-12);  // the sum over the group's heads
      CHECK_CLOSE("dv", v.grad(), ref.get(p + "dv"), 1e-12, 1e-12);
    }
  }
}

namespace {
// qkv (B, T, (H + 2·Hkv)·D) split into q (B, H, T, D), k and v (B, Hkv, T, D) views, the 4-d op,
// and the heads merged: what self_attention_packed with n_kv_heads does without copies.
Tensor split_attend_merge_gqa(const Tensor& qkv, std::int64_t H, std::int64_t Hkv, const AttentionOptions& o) {
  const std::int64_t B = qkv.size(0), T = qkv.size(1), D = qkv.size(2) / (H + 2 * Hkv);
  auto heads = [&](std::int64_t start, std::int64_t n) {
    return narrow(qkv, 2, start * D, n * D).reshape({B, T, n, D}).transpose(1, 2);
  };
  const Tensor out = scaled_dot_product_attention(heads(0, H), heads(H, Hkv), heads(H + Hkv, Hkv), o);
  return out.transpose(1, 2).reshape({B, T, H * D});
}
}  // namespace

TEST_CASE("packed grouped-query attention equals the split 4-d op, dropout masks too", "[attention][gqa]") {
  Generator gen(13);
  for (const auto& [H, Hkv] : std::vector<std::pair<std::int64_t, std::int64_t>>{{4, 2}, {4, 1}, {3, 3}, {6, 2}})
    for (const bool causal : {false, true}) {
      const std::int64_t B = 2, T = 70, D = 4;  // T > 64: several causal blocks
      INFO("H " << H << ", Hkv " << Hkv << ", causal " << causal);
      AttentionOptions o;
      o.causal = causal;
      o.key_padding_mask = padding_mask(B, T);
      const Tensor qkv = randn({B, T, (H + 2 * Hkv) * D}, gen, DType::float64);
      const Tensor dout = randn({B, T, H * D}, gen, DType::float64);
      Tensor a = qkv.clone().requires_grad_(), b = qkv.clone().requires_grad_();
      const Tensor out_a = self_attention_packed(a, H, o, Hkv), out_b = split_attend_merge_gqa(b, H, Hkv, o);
      out_a.backward(dout);
      out_b.backward(dout);
      CHECK_CLOSE("out", out_a.detach(), out_b.detach(), 1e-12, 1e-12);
      CHECK_CLOSE("dqkv", a.grad(), b.grad(), 1e-12, 1e-12);
      // dropout: the same per-(batch, query head) masks as the 4-d op
      AttentionOptions od = o;
      od.dropout_p = 0.3;
      od.training = true;
      Generator g1(5), g2(5);
      od.gen = &g1;
      const Tensor da = self_attention_packed(qkv, H, od, Hkv);
      od.gen = &g2;
      CHECK_CLOSE("dropout", da, split_attend_merge_gqa(qkv, H, Hkv, od), 1e-12, 1e-12);
    }
  CHECK_THROWS_WITH(self_attention_packed(zeros({1, 2, 16}), 4, {}, 3), Catch::Contains("n_kv_heads (3) must divide n_heads (4)"));
  CHECK_THROWS_WITH(self_attention_packed(zeros({1, 2, 15}), 4, {}, 2),
                    Catch::Contains("(n_heads + 2·n_kv_heads)·D") && Catch::Contains("[1, 2, 15]"));
}
