// test_attention_causal_offset.cpp — the causal mask shifted by causal_offset (bottom-right
// alignment for a KV cache step: query i sees keys j <= i + offset) against attention composed
// of primitive ops with that mask written out: forward and the three gradients in float64,
// across the 64-row causal blocks, with GQA and padding; the packed op; the errors.
#include <cmath>
#include <string>

#include "support/gradcheck_catch.hpp"
#include "support/tensor_diff.hpp"

using namespace tapegrad;

namespace {

// softmax(q·kᵀ/√D with j > i + offset hidden) · v, the G query heads of a kv head reading it
// through a repeat (the naive way), key padding too.
Tensor masked_naive_attention(const Tensor& q, const Tensor& k, const Tensor& v, std::int64_t offset,
                              const Tensor& key_padding = Tensor()) {
  const std::int64_t B = q.size(0), H = q.size(1), Tq = q.size(2), Tk = k.size(2), D = q.size(3), Hkv = k.size(1);
  const std::vector<double> pad = key_padding.defined() ? key_padding.to_vector() : std::vector<double>(B * Tk, 0.0);
  std::vector<double> hidden(B * Tq * Tk);
  for (std::int64_t b = 0; b < B; ++b)
    for (std::int64_t i = 0; i < Tq; ++i)
      for (std::int64_t j = 0; j < Tk; ++j) hidden[(b * Tq + i) * Tk + j] = j > i + offset || pad[b * Tk + j] != 0;
  auto repeat = [&](const Tensor& t) {  // (B, Hkv, Tk, D) -> (B, H, Tk, D)
    return reshape(expand(unsqueeze(t, 2), {B, Hkv, H / Hkv, Tk, t.size(3)}), {B, H, Tk, t.size(3)});
  };
  Tensor s = mul(matmul(q, transpose(repeat(k), -2, -1)), 1.0 / std::sqrt(static_cast<double>(D)));
  s = masked_fill(s, tensor(hidden, {B, 1, Tq, Tk}, DType::int64), -1e30);
  return matmul(softmax(s, -1), repeat(v));
}

struct Case {
  std::string name;
  std::int64_t B, H, Hkv, Tq, Tk, offset;
  bool pad = false;
};

}  // namespace

TEST_CASE("causal_offset attention matches the masked naive attention, forward and gradients", "[attention]") {
  const std::vector<Case> cases = {
      {"one new query after 4 cached keys", 1, 2, 2, 1, 5, 4},
      {"3 new queries after 4 cached keys", 2, 2, 2, 3, 7, 4},
      {"GQA H 4, Hkv 2, bottom-right", 2, 4, 2, 3, 6, 3},
      {"MQA with padding", 2, 4, 1, 2, 6, 4, true},
      {"offset other than Tk - Tq", 1, 2, 2, 5, 5, 2},
      // query and key blocks of 64, partial, shifted: the skipped products must stay hidden
      {"blocks: Tq 70 after 80 cached", 1, 1, 1, 70, 150, 80},
      {"blocks: Tq 150, Tk 150, offset 10", 1, 2, 1, 150, 150, 10},
  };
  for (const Case& c : cases) {
    INFO(c.name);
    Generator gen(21);
    const std::int64_t D = 4;
    const Tensor q0 = randn({c.B, c.H, c.Tq, D}, gen, DType::float64), k0 = randn({c.B, c.Hkv, c.Tk, D}, gen, DType::float64);
    const Tensor v0 = randn({c.B, c.Hkv, c.Tk, 3}, gen, DType::float64), dout = randn({c.B, c.H, c.Tq, 3}, gen, DType::float64);
    Tensor pad;
    if (c.pad) {
      std::vector<double> m(c.B * c.Tk, 0.0);
      m[1] = 1;  // batch 0 pads key 1
      pad = tensor(m, {c.B, c.Tk}, DType::int64);
    }
    AttentionOptions o;
    o.causal = true;
    o.causal_offset = c.offset;
    o.key_padding_mask = pad;
    auto run = [&](bool fused) {
      Tensor q = q0.clone().requires_grad_(), k = k0.clone().requires_grad_(), v = v0.clone().requires_grad_();
      Tensor out = fused ? scaled_dot_product_attention(q, k, v, o) : masked_naive_attention(q, k, v, c.offset, pad);
      out.backward(dout);
      return TensorList{out.detach(), q.grad(), k.grad(), v.grad()};
    };
    const TensorList fused = run(true), naive = run(false);
    for (std::size_t i = 0; i < fused.size(); ++i) {
      INFO("output " << i << " (out, dq, dk, dv): max |diff| " << testing::max_abs_diff(fused[i], naive[i]));
      CHECK(testing::max_abs_diff(fused[i], naive[i]) < 1e-12);
    }
  }
}

TEST_CASE("causal_offset 0 is the top-left causal mask, and Tk - Tq equals the last rows of the full attention",
          "[attention]") {
  Generator gen(22);
  const Tensor q = randn({1, 2, 6, 4}, gen, DType::float64), k = randn({1, 2, 6, 4}, gen, DType::float64);
  const Tensor v = randn({1, 2, 6, 4}, gen, DType::float64);
  AttentionOptions full;
  full.causal = true;
  const Tensor all = scaled_dot_product_attention(q, k, v, full);
  AttentionOptions zero = full;
  zero.causal_offset = 0;
  CHECK(testing::max_abs_diff(scaled_dot_product_attention(q, k, v, zero), all) == 0.0);
  // the last 2 queries against all 6 keys, bottom-right: rows 4 and 5 of the full attention
  AttentionOptions step = full;
  step.causal_offset = 4;
  const Tensor last = scaled_dot_product_attention(narrow(q, 2, 4, 2), k, v, step);
  CHECK(testing::max_abs_diff(last, narrow(all, 2, 4, 2)) < 1e-15);
}

TEST_CASE("packed self-attention with causal_offset equals the split 4-d op", "[attention]") {
  Generator gen(23);
  const std::int64_t B = 2, T = 5, H = 4, Hkv = 2, D = 2;
  const Tensor qkv = randn({B, T, (H + 2 * Hkv) * D}, gen, DType::float64);
  AttentionOptions o;
  o.causal = true;
  o.causal_offset = 2;
  const Tensor packed = self_attention_packed(qkv, H, o, Hkv);
  auto heads = [&](std::int64_t start, std::int64_t n) {
    return transpose(narrow(qkv, 2, start, n * D).reshape({B, T, n, D}), 1, 2);
  };
  const Tensor split = scaled_dot_product_attention(heads(0, H), heads(H * D, Hkv), heads((H + Hkv) * D, Hkv), o);
  CHECK(testing::max_abs_diff(packed, transpose(split, 1, 2).reshape({B, T, H * D})) < 1e-15);
}

TEST_CASE("causal_offset errors name the option and its value", "[attention][errors]") {
  const Tensor x = zeros({1, 1, 2, 2}, DType::float64);
  AttentionOptions o;
  o.causal = true;
  o.causal_offset = -1;
  REQUIRE_THROWS_AS(scaled_dot_product_attention(x, x, x, o), ValueError);
  REQUIRE_THROWS_WITH(scaled_dot_product_attention(x, x, x, o),
                      Catch::Contains("scaled_dot_product_attention: causal_offset must be >= 0, got -1"));
  o.causal = false;
  o.causal_offset = 2;
  REQUIRE_THROWS_WITH(scaled_dot_product_attention(x, x, x, o),
                      Catch::Contains("causal_offset = 2 shifts the causal mask, so it needs causal = true"));
  REQUIRE_THROWS_WITH(self_attention_packed(zeros({1, 2, 6}, DType::float64), 1, o),
                      Catch::Contains("self_attention_packed: causal_offset = 2"));
}
