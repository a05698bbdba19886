// deepnorm.cpp — DeepNorm (Wang et al. 2022, "DeepNet: Scaling Transformers to 1,000
// Layers", arXiv 2203.00555): Post-LN (post_ln.cpp) with the stream up-weighted by α before
// each norm, and the weights that write into it down-scaled by β at init.
//
//   h = N1(α·x + Attn(x));   y = N2(α·h + FFN(h))
//   α = (2M)^¼, β = (8M)^-¼ for M decoder-only blocks (deepnorm.hpp has the other stacks)
//
// Since N(α·x + F) = N(x + F/α), each block starts close to N(x): the update of a deep model
// stays bounded whatever its depth (the paper's Theorem). At init, the FFN weights and the
// attention's value and output projections are drawn Xavier-normal with gain β, queries and
// keys with gain 1.
#include "deepnorm.hpp"

#include <cmath>

#include "../../autograd/grad_mode.hpp"
#include "../../autograd/ops.hpp"
#include "../attention.hpp"
#include "../feed_forward.hpp"
#include "../init.hpp"

namespace tapegrad::nn {

DeepNormConstants deepnorm_decoder_only(std::int64_t M) { return {std::pow(2.0 * M, 0.25), std::pow(8.0 * M, -0.25)}; }
DeepNormConstants deepnorm_encoder_only(std::int64_t N) { return {std::pow(2.0 * N, 0.25), std::pow(8.0 * N, -0.25)}; }
DeepNormConstants deepnorm_encoder(std::int64_t N, std::int64_t M) {
  const double n4m = std::pow(double(N), 4) * double(M);
  return {0.81 * std::pow(n4m, 1.0 / 16), 0.87 * std::pow(n4m, -1.0 / 16)};
}
DeepNormConstants deepnorm_decoder(std::int64_t M) { return {std::pow(3.0 * M, 0.25), std::pow(12.0 * M, -0.25)}; }

DeepNormConstants deepnorm_constants(const Stack& s) {
  switch (s.kind) {
    case Stack::Kind::decoder_only: return deepnorm_decoder_only(s.decoder_layers);
    case Stack::Kind::encoder:
      return s.decoder_layers > 0 ? deepnorm_encoder(s.encoder_layers, s.decoder_layers) : deepnorm_encoder_only(s.encoder_layers);
    case Stack::Kind::decoder: return deepnorm_decoder(s.decoder_layers);
  }
  return {};
}

namespace {

// Xavier-normal with gain on rows [begin, end) of a (out, in) weight, as if they were their
// own matrix: the q, k and v parts of a fused projection each get their own fan-out.
void xavier_rows(const Tensor& w, std::int64_t begin, std::int64_t end, double gain) {
  Tensor part = narrow(w, 0, begin, end - begin);
  const double fan_in = double(w.size(1)), fan_out = double(end - begin);
  init::normal_(part, 0.0, gain * std::sqrt(2.0 / (fan_in + fan_out)));
}

void init_attention(MultiHeadAttention& attn, const Stack& stack) {
  NoGradGuard no_grad;
  const double beta = deepnorm_constants(stack).beta;
  const std::int64_t C = attn.options.d_model(), Ckv = attn.options.kv_heads() * attn.options.head_dim();
  if (attn.qkv) {  // q, k: gain 1; v: gain β (rows [q: C | k: Ckv | v: Ckv]; Ckv = C without GQA)
    xavier_rows(attn.qkv->weight, 0, C, 1.0);
    xavier_rows(attn.qkv->weight, C, C + Ckv, 1.0);
    xavier_rows(attn.qkv->weight, C + Ckv, C + 2 * Ckv, beta);
  } else {
    xavier_rows(attn.q_proj->weight, 0, C, 1.0);
    xavier_rows(attn.kv_proj->weight, 0, Ckv, 1.0);
    xavier_rows(attn.kv_proj->weight, Ckv, 2 * Ckv, beta);
  }
  xavier_rows(attn.out_proj->weight, 0, C, beta);
}

void init_ffn(FeedForward& ffn, const Stack& stack) {
  NoGradGuard no_grad;
  const double beta = deepnorm_constants(stack).beta;
  for (Linear* lin : {ffn.fc1.get(), ffn.fc_gate.get(), ffn.fc2.get()})
    if (lin) xavier_rows(lin->weight, 0, lin->weight.size(0), beta);
}

}  // namespace

PlacementInfo post_ln_placement();

PlacementInfo deepnorm_placement() {
  return {.name = "deepnorm",
          .label = "DeepNorm",
          .formula = "h = N1(α·x + Attn(x)); y = N2(α·h + FFN(h)); α = (2L)^¼, V, O and FFN drawn with gain (8L)^-¼",
          .paper = "Wang et al. 2022",
          .make = post_ln_placement().make,  // Post-LN's formula, with α from the depth
          .depth_alpha = [](const Stack& stack) { return deepnorm_constants(stack).alpha; },
          .init_attention = init_attention,
          .init_ffn = init_ffn};
}

}  // namespace tapegrad::nn
