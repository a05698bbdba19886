// model_init.cpp — initialization schemes.
#include "model_init.hpp"

#include <cmath>

#include "../autograd/grad_mode.hpp"
#include "../autograd/ops.hpp"
#include "init.hpp"

namespace tapegrad::nn {

std::string init_scheme_name(InitScheme s) {
  switch (s) {
    case InitScheme::pytorch: return "pytorch";
    case InitScheme::gpt2: return "gpt2";
    case InitScheme::xavier: return "xavier";
  }
  return "?";
}

InitScheme init_scheme_from_name(const std::string& name) {
  for (InitScheme s : {InitScheme::pytorch, InitScheme::gpt2, InitScheme::xavier})
    if (init_scheme_name(s) == name) return s;
  throw ValueError("unknown init '" + name + "' (expected pytorch, gpt2 or xavier)");
}

DeepNormConstants deepnorm_decoder_only(std::int64_t M) {
  return {std::pow(2.0 * M, 0.25), std::pow(8.0 * M, -0.25)};
}
DeepNormConstants deepnorm_encoder_only(std::int64_t N) {
  return {std::pow(2.0 * N, 0.25), std::pow(8.0 * N, -0.25)};
}
DeepNormConstants deepnorm_encoder(std::int64_t N, std::int64_t M) {
  const double n4m = std::pow(double(N), 4) * double(M);
  return {0.81 * std::pow(n4m, 1.0 / 16), 0.87 * std::pow(n4m, -1.0 / 16)};
}
DeepNormConstants deepnorm_decoder(std::int64_t M) {
  return {std::pow(3.0 * M, 0.25), std::pow(12.0 * M, -0.25)};
}

namespace {

// Rows [begin, end) of a (out, in) weight as a view, to initialize one part of a fused
// projection (the q, k and v parts of qkv) as its own matrix.
Tensor rows(const Tensor& w, std::int64_t begin, std::int64_t end) { return narrow(w, 0, begin, end - begin); }

void init_linear(Linear& lin, InitScheme scheme, double std_gpt2) {
  Tensor w = lin.weight;
  switch (scheme) {
    case InitScheme::pytorch: return;  // keep the module's own default
    case InitScheme::gpt2: init::normal_(w, 0.0, std_gpt2); break;
    case InitScheme::xavier: init::xavier_uniform_(w); break;
  }
  if (lin.bias.defined()) lin.bias.fill_(0.0);
}

// Xavier-normal with gain on rows [begin, end) of w, as if they were their own matrix.
void xavier_rows(const Tensor& w, std::int64_t begin, std::int64_t end, double gain) {
  Tensor part = rows(w, begin, end);
  const double fan_in = double(w.size(1)), fan_out = double(end - begin);
  init::normal_(part, 0.0, gain * std::sqrt(2.0 / (fan_in + fan_out)));
}

void init_attention(MultiHeadAttention& attn, InitScheme scheme, double residual_std, bool deepnorm, double beta) {
  const std::int64_t C = attn.options.d_model();
  for (Linear* lin : {attn.qkv.get(), attn.q_proj.get(), attn.kv_proj.get()})
    if (lin) init_linear(*lin, scheme, 0.02);
  init_linear(*attn.out_proj, scheme, residual_std);
  if (!deepnorm) return;
  if (attn.qkv) {  // q, k: gain 1; v: gain β
    xavier_rows(attn.qkv->weight, 0, C, 1.0);
    xavier_rows(attn.qkv->weight, C, 2 * C, 1.0);
    xavier_rows(attn.qkv->weight, 2 * C, 3 * C, beta);
  } else {
    xavier_rows(attn.q_proj->weight, 0, C, 1.0);
    xavier_rows(attn.kv_proj->weight, 0, C, 1.0);
    xavier_rows(attn.kv_proj->weight, C, 2 * C, beta);
  }
  xavier_rows(attn.out_proj->weight, 0, C, beta);
}

}  // namespace

void init_blocks(ModuleList& blocks, InitScheme scheme, double beta, bool b2t_scaling) {
  NoGradGuard no_grad;  // initialization writes through views; nothing to record
  const std::int64_t L = static_cast<std::int64_t>(blocks.size());
  const double residual_std = 0.02 / std::sqrt(2.0 * double(std::max<std::int64_t>(L, 1)));
  for (std::size_t i = 0; i < blocks.size(); ++i) {
    auto block = blocks.at<TransformerBlock>(i);
    const bool deepnorm = block->config.placement == Placement::deepnorm;
    init_attention(*block->attn, scheme, residual_std, deepnorm, beta);
    if (block->cross_attn) init_attention(*block->cross_attn, scheme, residual_std, deepnorm, beta);
    FeedForward& ffn = *block->ffn;
    init_linear(*ffn.fc1, scheme, 0.02);
    if (ffn.fc_gate) init_linear(*ffn.fc_gate, scheme, 0.02);
    init_linear(*ffn.fc2, scheme, residual_std);
    if (deepnorm)
      for (Linear* lin : {ffn.fc1.get(), ffn.fc_gate.get(), ffn.fc2.get()})
        if (lin) xavier_rows(lin->weight, 0, lin->weight.size(0), beta);
    if (b2t_scaling) {  // every Linear weight of the block · L^(-1/2), AdaLN-Zero's zeros stay zeros
      const double s = 1.0 / std::sqrt(double(L));
      for (auto& [name, module] : block->named_modules())
        if (auto* lin = dynamic_cast<Linear*>(module.get())) lin->weight.copy_(mul(lin->weight, s));
    }
  }
}

void init_embedding(Embedding& emb, InitScheme scheme) {
  switch (scheme) {
    case InitScheme::pytorch: return;
    case InitScheme::gpt2: init::normal_(emb.weight, 0.0, 0.02); return;
    case InitScheme::xavier:
      init::normal_(emb.weight, 0.0, 1.0 / std::sqrt(double(emb.options.embedding_dim())));
      return;
  }
}

}  // namespace tapegrad::nn
