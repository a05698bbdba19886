// test_attention_flash.cpp — the tiled online-softmax ("flash") attention kernels against the
// materialized ones, in float64 with tiles small enough that every case crosses several tiles
// and partial ones: forward and the three gradients for each mask, cross-attention, GQA,
// Dv ≠ D, strided inputs and the packed self-attention path; a gradcheck; 1 vs 2 threads
// bitwise; float32 with the default tiles; the error when flash is forced with dropout; what
// automatic picks.
#include <cmath>
#include <string>

#include <tapegrad/autograd/cpu/attention_kernels.hpp>
#include <tapegrad/autograd/ops/attention_choice.hpp>

#include "support/gradcheck_catch.hpp"
#include "support/attention_grads.hpp"
#include "support/reference.hpp"

using namespace tapegrad;
using tapegrad::testing::AttentionGrads;
using tapegrad::testing::check_same_grads;
using tapegrad::testing::run_with_grads;
using tapegrad::testing::param;

namespace {

// Sets the flash tile sizes for one scope (testing only), then restores them.
struct TilesGuard {
  detail::FlashTiles previous;
  TilesGuard(std::int64_t Bq, std::int64_t Bk) : previous(detail::set_flash_tiles_for_testing({Bq, Bk})) {}
  ~TilesGuard() { detail::set_flash_tiles_for_testing(previous); }
};

struct Case {
  std::string name;
  std::int64_t B, H, Hkv, Tq, Tk, D, Dv;
  bool causal = false;
  std::int64_t causal_offset = 0;
  int pad = 0;  // 1: batch b pads its last b + 1 keys; 2: also key 0 of batch 0 (with causal,
                // its query 0 sees nothing) and every key of the last batch
};

AttentionOptions options_for(const Case& c, AttentionKernel kernel) {
  AttentionOptions o;
  o.causal = c.causal;
  o.causal_offset = c.causal_offset;
  o.kernel = kernel;
  if (c.pad) {
    std::vector<double> m(c.B * c.Tk, 0.0);
    for (std::int64_t b = 0; b < c.B; ++b)
      for (std::int64_t j = std::max<std::int64_t>(c.Tk - (b + 1), 1); j < c.Tk; ++j) m[b * c.Tk + j] = 1;
    if (c.pad == 2) {
      m[0] = 1;
      for (std::int64_t j = 0; j < c.Tk; ++j) m[(c.B - 1) * c.Tk + j] = 1;
    }
    o.key_padding_mask = tensor(m, {c.B, c.Tk}, DType::int64);
  }
  return o;
}

bool bitwise_equal(const Tensor& a, const Tensor& b) { return a.to_vector<double>() == b.to_vector<double>(); }

}  // namespace

TEST_CASE("flash attention equals the materialized kernel, forward and gradients, in float64", "[attention][flash]") {
  const TilesGuard tiles(3, 4);  // Bq = 3, Bk = 4: several tiles, the last ones partial
  const std::vector<Case> cases = {
      {"no mask", 2, 2, 2, 9, 9, 5, 5},
      {"causal", 2, 2, 2, 10, 10, 5, 5, true},
      {"causal, causal_offset 2", 1, 2, 2, 10, 10, 4, 4, true, 2},
      {"causal, bottom-right aligned (Tq 5, Tk 11, offset 6)", 2, 2, 2, 5, 11, 4, 4, true, 6},
      {"key padding", 3, 2, 2, 7, 9, 4, 4, false, 0, 1},
      {"causal and key padding, fully masked rows", 3, 2, 2, 9, 9, 4, 4, true, 0, 2},
      {"cross-attention Tq < Tk", 2, 2, 2, 5, 13, 4, 4},
      {"cross-attention Tq > Tk, causal", 2, 2, 2, 13, 5, 4, 4, true},
      {"grouped-query (H 4, Hkv 2), causal", 2, 4, 2, 9, 9, 4, 4, true},
      {"multi-query (H 3, Hkv 1), padding", 2, 3, 1, 7, 10, 4, 4, false, 0, 1},
      {"Dv != D", 2, 2, 2, 9, 11, 3, 6, true, 2},
      {"no keys (Tk 0)", 1, 2, 2, 4, 0, 3, 3},
      // 64 queries and more: the materialized kernel stages each kv head once for its group.
      {"grouped-query (H 4, Hkv 2), causal, staged (Tq 70)", 1, 4, 2, 70, 70, 8, 8, true},
      {"multi-query (H 3, Hkv 1), padding, staged (Tq 66, Tk 80)", 2, 3, 1, 66, 80, 4, 6, false, 0, 1},
  };
  Generator gen(41);
  for (const Case& c : cases) {
    INFO(c.name);
    const Tensor q = randn({c.B, c.H, c.Tq, c.D}, gen, DType::float64),
                 k = randn({c.B, c.Hkv, c.Tk, c.D}, gen, DType::float64),
                 v = randn({c.B, c.Hkv, c.Tk, c.Dv}, gen, DType::float64),
                 dout = randn({c.B, c.H, c.Tq, c.Dv}, gen, DType::float64);
    auto with = [&](AttentionKernel kernel) {
      const AttentionOptions o = options_for(c, kernel);
      return run_with_grads([&](const Tensor& a, const Tensor& b, const Tensor& d) { return scaled_dot_product_attention(a, b, d, o); },
                 q, k, v, dout);
    };
    check_same_grads(with(AttentionKernel::flash), with(AttentionKernel::materialized), 1e-12);
  }
  SECTION("inputs that are transposed views of (B, T, H, D), read in place") {
    const Tensor x = randn({2, 11, 4, 5}, gen, DType::float64), y = randn({2, 9, 2, 5}, gen, DType::float64),
                 z = randn({2, 9, 2, 5}, gen, DType::float64), dout = randn({2, 4, 11, 5}, gen, DType::float64);
    auto with = [&](AttentionKernel kernel) {
      AttentionOptions o;
      o.causal = true;
      o.kernel = kernel;
      return run_with_grads([&](const Tensor& a, const Tensor& b, const Tensor& d) {
        return scaled_dot_product_attention(a.transpose(1, 2), b.transpose(1, 2), d.transpose(1, 2), o);
      }, x, y, z, dout);
    };
    check_same_grads(with(AttentionKernel::flash), with(AttentionKernel::materialized), 1e-12);
  }
}

TEST_CASE("packed self-attention runs the flash kernel like the materialized one", "[attention][flash]") {
  const TilesGuard tiles(4, 3);
  Generator gen(43);
  for (const std::int64_t Hkv : {4, 2})
    for (const bool causal : {false, true}) {
      INFO("Hkv " << Hkv << ", causal " << causal);
      const std::int64_t B = 2, T = 11, H = 4, D = 3;
      const Tensor qkv = randn({B, T, (H + 2 * Hkv) * D}, gen, DType::float64);
      const Tensor dout = randn({B, T, H * D}, gen, DType::float64);
      auto with = [&](AttentionKernel kernel) {
        AttentionOptions o;
        o.causal = causal;
        o.key_padding_mask = tensor(std::vector<double>{0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1,  //
                                                        1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1},
                                    {B, T}, DType::int64);
        o.kernel = kernel;
        Tensor x = qkv.clone().requires_grad_();
        const Tensor out = self_attention_packed(x, H, o, Hkv);
        out.backward(dout);
        return std::pair{out.detach(), x.grad()};
      };
      const auto [out_f, dqkv_f] = with(AttentionKernel::flash);
      const auto [out_m, dqkv_m] = with(AttentionKernel::materialized);
      CHECK_CLOSE("out", out_f, out_m, 1e-12, 1e-12);
      CHECK_CLOSE("dqkv", dqkv_f, dqkv_m, 1e-12, 1e-12);
    }
}

TEST_CASE("flash attention passes float64 gradcheck", "[attention][flash]") {
  const TilesGuard tiles(2, 3);
  using L = const TensorList&;
  const std::vector<Case> cases = {
      {"no mask", 1, 2, 2, 5, 7, 2, 3},
      {"causal, causal_offset 1, GQA", 1, 2, 1, 5, 5, 2, 2, true, 1},
      {"causal and key padding, fully masked rows", 2, 1, 1, 4, 5, 2, 2, true, 0, 2},
  };
  for (const Case& c : cases) {
    INFO(c.name);
    const AttentionOptions o = options_for(c, AttentionKernel::flash);
    CHECK_GRADCHECK([o](L in) { return scaled_dot_product_attention(in[0], in[1], in[2], o); },
                    {param({c.B, c.H, c.Tq, c.D}, 1), param({c.B, c.Hkv, c.Tk, c.D}, 2),
                     param({c.B, c.Hkv, c.Tk, c.Dv}, 3)});
  }
  // create_graph runs the composite form whichever kernel ran the forward
  AttentionOptions o;
  o.causal = true;
  o.kernel = AttentionKernel::flash;
  CHECK_GRADGRADCHECK([o](L in) { return scaled_dot_product_attention(in[0], in[1], in[2], o); },
                      {param({1, 1, 4, 2}, 4), param({1, 1, 4, 2}, 5), param({1, 1, 4, 2}, 6)});
}

TEST_CASE("flash attention does not depend on the number of threads", "[attention][flash]") {
  const TilesGuard tiles(16, 32);
  Generator gen(47);
  // GQA and causal, large enough for the OpenMP paths (forward and backward).
  const Tensor q = randn({2, 4, 80, 16}, gen), k = randn({2, 2, 80, 16}, gen), v = randn({2, 2, 80, 16}, gen),
               dout = randn({2, 4, 80, 16}, gen);
  auto go = [&] {
    AttentionOptions o;
    o.causal = true;
    o.kernel = AttentionKernel::flash;
    return run_with_grads([&](const Tensor& a, const Tensor& b, const Tensor& d) { return scaled_dot_product_attention(a, b, d, o); },
               q, k, v, dout);
  };
  const int threads = get_num_threads();
  set_num_threads(2);
  const AttentionGrads two = go();
  set_num_threads(1);
  const AttentionGrads one = go();
  set_num_threads(threads);
  CHECK(bitwise_equal(two.out, one.out));
  CHECK(bitwise_equal(two.dq, one.dq));
  CHECK(bitwise_equal(two.dk, one.dk));
  CHECK(bitwise_equal(two.dv, one.dv));
}

TEST_CASE("forcing the flash kernel with attention dropout is an error naming the op and the option",
          "[attention][flash][errors]") {
  AttentionOptions o;
  o.kernel = AttentionKernel::flash;
  o.dropout_p = 0.1;
  o.training = true;
  const Tensor x = zeros({1, 2, 3, 4});
  CHECK_THROWS_WITH(scaled_dot_product_attention(x, x, x, o),
                    Catch::Contains("scaled_dot_product_attention") && Catch::Contains("AttentionKernel::flash") &&
                        Catch::Contains("dropout"));
  CHECK_THROWS_WITH(self_attention_packed(zeros({1, 3, 6}), 1, o),
                    Catch::Contains("self_attention_packed") && Catch::Contains("dropout"));
  o.training = false;  // dropout inactive outside training: flash runs
  CHECK_NOTHROW(scaled_dot_product_attention(x, x, x, o));
}

TEST_CASE("automatic picks the documented kernel", "[attention][flash]") {
  using detail::select_attention_kernel;
  const char* op = "scaled_dot_product_attention";
  AttentionOptions o;
  const std::int64_t big = static_cast<std::int64_t>(std::sqrt(static_cast<double>(kFlashAttentionMinScores)));
  REQUIRE(big * big == kFlashAttentionMinScores);
  CHECK(select_attention_kernel(op, o, 64, 64) == AttentionKernel::materialized);    // benchmark S, G
  CHECK(select_attention_kernel(op, o, 256, 256) == AttentionKernel::materialized);  // benchmark M
  CHECK(select_attention_kernel(op, o, big, big - 1) == AttentionKernel::materialized);
  CHECK(select_attention_kernel(op, o, big, big) == AttentionKernel::flash);
  CHECK(select_attention_kernel(op, o, 4 * big, 4 * big) == AttentionKernel::flash);
  CHECK(select_attention_kernel(op, o, 1, 1 << 30) == AttentionKernel::materialized);  // a decode step
  o.dropout_p = 0.1;
  CHECK(select_attention_kernel(op, o, big, big) == AttentionKernel::flash);  // not training: no dropout
  o.training = true;
  CHECK(select_attention_kernel(op, o, big, big) == AttentionKernel::materialized);
  o = {};
  o.kernel = AttentionKernel::materialized;
  CHECK(select_attention_kernel(op, o, big, big) == AttentionKernel::materialized);
  o.kernel = AttentionKernel::flash;
  CHECK(select_attention_kernel(op, o, 64, 64) == AttentionKernel::flash);
  SECTION("the op runs what was picked") {
    Generator gen(53);
    const std::int64_t T = big;
    const Tensor q = randn({1, 1, T, 4}, gen), k = randn({1, 1, T, 4}, gen), v = randn({1, 1, T, 4}, gen);
    AttentionOptions automatic, flash, materialized;
    automatic.causal = flash.causal = materialized.causal = true;
    flash.kernel = AttentionKernel::flash;
    materialized.kernel = AttentionKernel::materialized;
    const Tensor out = scaled_dot_product_attention(q, k, v, automatic);
    CHECK(bitwise_equal(out, scaled_dot_product_attention(q, k, v, flash)));
    CHECK_FALSE(bitwise_equal(out, scaled_dot_product_attention(q, k, v, materialized)));
  }
}

TEST_CASE("flash attention with its default tiles and D = 64 equals the materialized kernel in float64",
          "[attention][flash]") {
  // T = 300, D = 64: each tile's products go in two chunks (attention_staging.hpp), both
  // kernels on staged operands, the kv head shared by two query heads.
  Generator gen(61);
  const Tensor q = randn({1, 2, 300, 64}, gen, DType::float64), k = randn({1, 1, 300, 64}, gen, DType::float64),
               v = randn({1, 1, 300, 64}, gen, DType::float64), dout = randn({1, 2, 300, 64}, gen, DType::float64);
  for (const bool causal : {true, false}) {
    INFO("causal " << causal);
    auto with = [&](AttentionKernel kernel) {
      AttentionOptions o;
      o.causal = causal;
      o.kernel = kernel;
      return run_with_grads(
          [&](const Tensor& a, const Tensor& b, const Tensor& d) { return scaled_dot_product_attention(a, b, d, o); },
          q, k, v, dout);
    };
    check_same_grads(with(AttentionKernel::flash), with(AttentionKernel::materialized), 1e-12);
  }
}

TEST_CASE("flash attention in float32 with its default tiles agrees with float64", "[attention][flash]") {
  // T = 600: three key tiles of 256 (the last partial) and ten query blocks of 64.
  Generator gen(59);
  const Tensor q = randn({1, 2, 600, 16}, gen, DType::float64), k = randn({1, 1, 600, 16}, gen, DType::float64),
               v = randn({1, 1, 600, 8}, gen, DType::float64), dout = randn({1, 2, 600, 8}, gen, DType::float64);
  auto with = [&](AttentionKernel kernel, DType dtype) {
    AttentionOptions o;
    o.causal = true;
    o.kernel = kernel;
    return run_with_grads([&](const Tensor& a, const Tensor& b, const Tensor& d) { return scaled_dot_product_attention(a, b, d, o); },
               q.to(dtype), k.to(dtype), v.to(dtype), dout.to(dtype));
  };
  const AttentionGrads f32 = with(AttentionKernel::flash, DType::float32), f64 = with(AttentionKernel::materialized, DType::float64);
  CHECK_CLOSE("out", f32.out.to(DType::float64), f64.out, 1e-5, 1e-4);
  CHECK_CLOSE("dq", f32.dq.to(DType::float64), f64.dq, 1e-5, 1e-4);
  CHECK_CLOSE("dk", f32.dk.to(DType::float64), f64.dk, 1e-5, 1e-4);
  CHECK_CLOSE("dv", f32.dv.to(DType::float64), f64.dv, 1e-5, 1e-4);
}
