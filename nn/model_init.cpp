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
    case InitScheme::gpt2_unscaled: return "gpt2-unscaled";
    case InitScheme::xavier: return "xavier";
  }
  return "?";
}

InitScheme init_scheme_from_name(const std::string& name) {
  for (InitScheme s : {InitScheme::pytorch, InitScheme::gpt2, InitScheme::gpt2_unscaled, InitScheme::xavier})
    if (init_scheme_name(s) == name) return s;
  throw ValueError("unknown init '" + name + "' (expected pytorch, gpt2, gpt2-unscaled or xavier)");
}

namespace {

void init_linear(Linear& lin, InitScheme scheme, double std_gpt2) {
  Tensor w = lin.weight;
  switch (scheme) {
    case InitScheme::pytorch: return;  // keep the module's own default
    case InitScheme::gpt2:
    case InitScheme::gpt2_unscaled: init::normal_(w, 0.0, std_gpt2); break;
    case InitScheme::xavier: init::xavier_uniform_(w); break;
  }
  if (lin.bias.defined()) lin.bias.fill_(0.0);
}

void init_attention(MultiHeadAttention& attn, InitScheme scheme, double residual_std) {
  for (Linear* lin : {attn.qkv.get(), attn.q_proj.get(), attn.kv_proj.get()})
    if (lin) init_linear(*lin, scheme, 0.02);
  init_linear(*attn.out_proj, scheme, residual_std);
}

}  // namespace

void init_blocks(ModuleList& blocks, InitScheme scheme, bool b2t_scaling) {
  NoGradGuard no_grad;  // initialization writes through views; nothing to record
  const std::int64_t L = static_cast<std::int64_t>(blocks.size());
  const double residual_std =
      scheme == InitScheme::gpt2 ? 0.02 / std::sqrt(2.0 * double(std::max<std::int64_t>(L, 1))) : 0.02;
  for (std::size_t i = 0; i < blocks.size(); ++i) {
    auto block = blocks.at<TransformerBlock>(i);
    const PlacementInfo& placement = block->placement();
    for (MultiHeadAttention* attn : {block->attn.get(), block->cross_attn.get()}) {
      if (!attn) continue;
      init_attention(*attn, scheme, residual_std);
      if (placement.init_attention) placement.init_attention(*attn, block->stack);
    }
    FeedForward& ffn = *block->ffn;
    init_linear(*ffn.fc1, scheme, 0.02);
    if (ffn.fc_gate) init_linear(*ffn.fc_gate, scheme, 0.02);
    init_linear(*ffn.fc2, scheme, residual_std);
    if (placement.init_ffn) placement.init_ffn(ffn, block->stack);
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
    case InitScheme::gpt2:
    case InitScheme::gpt2_unscaled: init::normal_(emb.weight, 0.0, 0.02); return;
    case InitScheme::xavier:
      init::normal_(emb.weight, 0.0, 1.0 / std::sqrt(double(emb.options.embedding_dim())));
      return;
  }
}

}  // namespace tapegrad::nn
