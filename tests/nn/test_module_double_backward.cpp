// test_module_double_backward.cpp — second derivatives through every module of nn/: a float64
// gradgradcheck over the input and all parameters of Linear, Embedding, LayerNorm, RMSNorm,
// AdaLN, FeedForward (every activation), MultiHeadAttention (self with masks, cross),
// Dropout, every TransformerBlock placement (with each norm, and with cross-attention), a
// TransformerLM and a Seq2SeqTransformer of every registered placement; checkpointed blocks
// differentiate twice to the same numbers as plain ones.
#include <algorithm>
#include <string>
#include <vector>

#include "nn/nn_helpers.hpp"
#include "support/gradcheck_catch.hpp"

using namespace tapegrad;
using nn::NormKind;
using nn::Placement;
using tapegrad::testing::max_abs_diff;
using tapegrad::testing::param;
using tapegrad::testing::randomize_parameters_;
using tapegrad::testing::tiny_seq2seq;
using tapegrad::testing::with_parameters;
using tapegrad::testing::fit_for_placement;
using tapegrad::testing::kLibraryPlacements;
using tapegrad::testing::close_block_gates_;
using tapegrad::testing::with_parameters_but_gates;
using tapegrad::testing::supports_seq2seq;

namespace {

constexpr DType f64 = DType::float64;
using L = const TensorList&;

// (2, T) int64, 1 = padded: row 1 pads its last position.
Tensor pad_last_of_row1(std::int64_t T) {
  std::vector<double> m(2 * T, 0.0);
  m[2 * T - 1] = 1;
  return tensor(m, {2, T}, DType::int64);
}

nn::TransformerBlockConfig small_block(const Placement& placement, const NormKind& norm, bool cross) {
  nn::TransformerBlockConfig c;
  c.d_model = 4;
  c.n_heads = 2;
  c.d_ff = 6;
  c.placement = placement;
  c.norm = norm;
  c.causal = true;
  c.cross_attention = cross;
  c.dtype = f64;
  if (nn::norm_info(norm).conditional) c.cond_dim = 3;
  if (nn::placement_info(placement).residual_scale && norm != NormKind::adaln_zero) c.residual_scale = 1.5;
  return c;
}

// The parameters of m with these names (those it has): a gradgradcheck costs (elements
// checked)², so the whole models are checked on a few tensors that span them.
TensorList some_parameters(const nn::Module& m, const std::vector<std::string>& names) {
  TensorList out;
  for (const auto& [name, p] : m.named_parameters())
    if (std::find(names.begin(), names.end(), name) != names.end()) out.push_back(p);
  return out;
}

}  // namespace

TEST_CASE("Layers pass a float64 gradgradcheck over input and parameters", "[modules][gradgradcheck]") {
  manual_seed(1);
  SECTION("Linear") {
    nn::Linear lin(nn::LinearOptions(3, 2).dtype(f64));
    CHECK_GRADGRADCHECK([&](L in) { return lin.forward(in[0]); }, with_parameters({param({2, 3}, 2)}, lin));
  }
  SECTION("Embedding, followed by tanh (its own second derivative is zero)") {
    nn::Embedding emb(nn::EmbeddingOptions(4, 3).dtype(f64));
    const Tensor idx = tensor({0, 3, 3, 1}, {2, 2}, DType::int64);
    CHECK_GRADGRADCHECK([&](L) { return tanh(emb.forward(idx)); }, {emb.weight});
  }
  SECTION("LayerNorm, RMSNorm") {
    nn::LayerNorm ln(nn::NormOptions(4).dtype(f64));
    randomize_parameters_(ln, 3);
    CHECK_GRADGRADCHECK([&](L in) { return ln.forward(in[0]); }, with_parameters({param({2, 4}, 4)}, ln));
    nn::RMSNorm rms(nn::NormOptions(4).dtype(f64));
    randomize_parameters_(rms, 5);
    CHECK_GRADGRADCHECK([&](L in) { return rms.forward(in[0]); }, with_parameters({param({2, 4}, 6)}, rms));
  }
  SECTION("AdaLN") {
    nn::AdaLN ada(nn::AdaLNOptions(4, 3).dtype(f64));
    CHECK_GRADGRADCHECK([&](L in) { return ada.forward(in[0], in[1]); },
                        with_parameters({param({2, 2, 4}, 7), param({2, 3}, 8)}, ada));
  }
  SECTION("FeedForward, every activation") {
    for (nn::Activation a : {nn::Activation::gelu, nn::Activation::gelu_tanh, nn::Activation::relu,
                             nn::Activation::silu, nn::Activation::swiglu}) {
      INFO("activation " << nn::activation_name(a));
      nn::FeedForward ffn(nn::FeedForwardOptions(3, 4).activation(a).dtype(f64));
      CHECK_GRADGRADCHECK([&](L in) { return ffn.forward(in[0]); }, with_parameters({param({2, 3}, 9)}, ffn));
    }
  }
  SECTION("MultiHeadAttention: causal self-attention with padding, cross-attention") {
    nn::MultiHeadAttention self(nn::MultiHeadAttentionOptions(4, 2).causal(true).dtype(f64));
    const Tensor pad = pad_last_of_row1(3);
    CHECK_GRADGRADCHECK([&](L in) { return self.forward(in[0], pad); }, with_parameters({param({2, 3, 4}, 10)}, self));
    nn::MultiHeadAttention cross(nn::MultiHeadAttentionOptions(4, 2).cross(true).kv_dim(3).dtype(f64));
    CHECK_GRADGRADCHECK([&](L in) { return cross.forward_cross(in[0], in[1], pad_last_of_row1(2)); },
                        with_parameters({param({2, 2, 4}, 11), param({2, 2, 3}, 12)}, cross));
  }
  SECTION("MultiHeadAttention: grouped-query heads with QK-norm and RoPE; multi-query cross-attention") {
    nn::MultiHeadAttention self(nn::MultiHeadAttentionOptions(8, 4).n_kv_heads(2).qk_norm(nn::QkNorm::rmsnorm)
                                    .causal(true).rope(true).dtype(f64));
    randomize_parameters_(self, 15);
    TensorList inputs = {param({1, 3, 8}, 16)};
    for (const Tensor& p : some_parameters(self, {"q_norm.weight", "k_norm.weight"})) inputs.push_back(p);
    REQUIRE(inputs.size() == 3);
    CHECK_GRADGRADCHECK([&](L in) { return self.forward(in[0], Tensor(), 2); }, inputs);
    nn::MultiHeadAttention cross(nn::MultiHeadAttentionOptions(4, 2).n_kv_heads(1).qk_norm(nn::QkNorm::layernorm)
                                     .cross(true).kv_dim(3).dtype(f64));
    CHECK_GRADGRADCHECK([&](L in) { return cross.forward_cross(in[0], in[1]); },
                        with_parameters({param({1, 2, 4}, 17), param({1, 2, 3}, 18)}, cross));
  }
  SECTION("Dropout in training, with a generator reset at every call") {
    Generator gen(13);
    nn::Dropout drop(0.3, &gen);
    CHECK_GRADGRADCHECK([&](L in) {
      gen = Generator(13);
      return mul(drop.forward(in[0]), in[0]);
    }, {param({3, 3}, 14)});
  }
}

namespace {

// The combinations of the block test: every registered placement with LayerNorm, and the other
// norms and cross-attention on a few placements.
struct BlockCombo {
  Placement placement;
  NormKind norm;
  bool cross;
};

std::vector<BlockCombo> block_combos() {
  std::vector<BlockCombo> combos;
  for (const nn::PlacementInfo& p : kLibraryPlacements) combos.push_back({Placement(p.name), NormKind::layernorm, false});
  combos.push_back({Placement::pre, NormKind::rmsnorm, false});
  combos.push_back({Placement::post, NormKind::adaln, false});
  combos.push_back({Placement::pre, NormKind::adaln_zero, false});
  combos.push_back({Placement::b2t, NormKind::layernorm, true});
  return combos;
}

// gradgradcheck of the blocks of combos [begin, end): the test is cut in two halves, two ctest
// entries that run side by side (a gradgradcheck under the sanitizers takes minutes).
void check_block_combos(std::size_t begin, std::size_t end) {
  const std::vector<BlockCombo> all = block_combos();
  std::uint64_t seed = 200 + 10 * begin;
  for (std::size_t i = begin; i < std::min(end, all.size()); ++i) {
    const BlockCombo& combo = all[i];
    INFO(combo.placement.name << " / " << combo.norm.name << (combo.cross ? " / cross-attention" : ""));
    manual_seed(seed);
    nn::TransformerBlock block(fit_for_placement(small_block(combo.placement, combo.norm, combo.cross)));
    randomize_parameters_(block, seed, 0.5);  // away from zero gates and unit gains
    close_block_gates_(block);
    const bool ada = nn::norm_info(combo.norm).conditional;
    TensorList inputs;
    inputs.reserve(3);  // (GCC 12 warns of a bogus out-of-bounds access without it)
    inputs.push_back(param({2, 3, 4}, seed + 1));
    if (ada) inputs.push_back(param({2, 3}, seed + 2));
    if (combo.cross) inputs.push_back(param({2, 2, 4}, seed + 3));
    auto context = [&](L in) {
      nn::BlockContext ctx;
      ctx.key_padding_mask = pad_last_of_row1(3);
      if (ada) ctx.cond = in[1];
      if (combo.cross) ctx.memory = in[ada ? 2 : 1];
      return ctx;
    };
    CHECK_GRADGRADCHECK([&](L in) { return block.forward(in[0], context(in)); },
                        with_parameters_but_gates(inputs, block));
    seed += 10;
  }
}

}  // namespace

TEST_CASE("Every block placement × norm passes a float64 gradgradcheck (first half)", "[residual][block][gradgradcheck]") {
  check_block_combos(0, block_combos().size() / 2);
}

TEST_CASE("Every block placement × norm passes a float64 gradgradcheck (second half)", "[residual][block][gradgradcheck]") {
  check_block_combos(block_combos().size() / 2, block_combos().size());
}

TEST_CASE("TransformerLM of every registered placement passes a gradgradcheck", "[transformer][gradgradcheck]") {
  for (const nn::PlacementInfo& p : kLibraryPlacements) {
    INFO(p.name);
    manual_seed(40);
    nn::TransformerLMConfig c;
    c.vocab_size = 4;
    c.max_seq_len = 3;
    c.n_layers = 2;
    c.block = fit_for_placement(small_block(Placement(p.name), NormKind::layernorm, false));
    nn::TransformerLM lm(c);
    randomize_parameters_(lm, 41, 0.5);
    close_block_gates_(lm);
    const Tensor tokens = tensor({1, 2, 3, 0, 0, 1}, {2, 3}, DType::int64);
    const TensorList lm_checked = some_parameters(lm, {"tok_emb.weight", "blocks.0.attn.qkv.weight",
                                                       "blocks.0.attn_residual.norm.weight", "blocks.1.ffn.fc1.weight",
                                                       "final_norm.weight"});
    CHECK(lm_checked.size() >= 3);
    CHECK_GRADGRADCHECK([&](L) { return cross_entropy(lm.forward(tokens).reshape({6, 4}), tokens.reshape({6})); },
                        lm_checked);
  }
}

// The seq2seq half of the test above: its own ctest entry, so that the two run side by side.
TEST_CASE("Seq2SeqTransformer of every registered placement passes a gradgradcheck", "[transformer][gradgradcheck]") {
  for (const nn::PlacementInfo& p : kLibraryPlacements) {
    if (!supports_seq2seq(p)) continue;
    INFO(p.name);
    manual_seed(43);
    nn::Seq2SeqConfig s = tiny_seq2seq(1, 1, Placement(p.name));
    s.block = small_block(Placement(p.name), NormKind::layernorm, false);
    s.src_vocab_size = 5;
    s.tgt_vocab_size = 4;
    s.max_seq_len = 3;
    nn::Seq2SeqTransformer model(s);
    randomize_parameters_(model, 42, 0.5);
    close_block_gates_(model);
    const Tensor src = tensor({1, 2, 3, 4, 0, 1}, {2, 3}, DType::int64), tgt = tensor({1, 2, 3, 0}, {2, 2}, DType::int64);
    const TensorList s2s_checked =
        some_parameters(model, {"src_emb.weight", "encoder.0.attn.qkv.weight", "decoder.0.cross_attn.kv_proj.weight",
                                "decoder.0.cross_residual.norm.weight", "decoder.0.ffn.fc2.weight"});
    CHECK(s2s_checked.size() >= 4);
    CHECK_GRADGRADCHECK([&](L) { return model.forward(src, tgt); }, s2s_checked);
  }
}

TEST_CASE("Checkpointed blocks differentiate twice to the numbers of plain blocks", "[checkpoint][gradgradcheck]") {
  // The gradient-penalty loss L = Σ logits·w + ‖∂(Σ logits·w)/∂h‖² needs the backward of
  // every block recorded: with checkpointing the blocks' backward recomputes them.
  for (const Placement& placement : {Placement::pre, Placement::post, Placement::b2t}) {
    INFO(placement.name);
    manual_seed(50);
    nn::TransformerLMConfig c;
    c.vocab_size = 5;
    c.max_seq_len = 4;
    c.n_layers = 2;
    c.block = small_block(placement, NormKind::layernorm, false);
    c.block.dropout = 0.2;
    nn::TransformerLM lm(c);
    randomize_parameters_(lm, 51, 0.5);
    const Tensor tokens = tensor({1, 2, 3, 4, 0, 1, 2, 3}, {2, 4}, DType::int64);
    const Tensor w = param({2, 4, 5}, 52).detach();
    auto penalty_grads = [&](bool checkpointed) {
      lm.set_activation_checkpointing(checkpointed);
      lm.zero_grad();
      manual_seed(53);  // the same dropout masks in both runs
      const Tensor f = sum(mul(lm.forward(tokens), w));
      const Tensor wte = lm.parameters()[0];
      const Tensor g = grad({f}, {wte}, {}, {.retain_graph = true, .create_graph = true})[0];
      add(f, sum(mul(g, g))).backward();
      TensorList grads;
      for (const Tensor& p : lm.parameters()) grads.push_back(p.grad().clone());
      return grads;
    };
    const TensorList plain = penalty_grads(false), checkpointed = penalty_grads(true);
    // grad() with respect to a parameter used inside a checkpointed block, and .grad() untouched
    auto inner_grad = [&](bool checkpointed) {
      lm.set_activation_checkpointing(checkpointed);
      lm.zero_grad();
      manual_seed(53);
      const Tensor qkv = some_parameters(lm, {"blocks.0.attn.qkv.weight"})[0];
      const Tensor g = grad({sum(mul(lm.forward(tokens), w))}, {qkv})[0];
      for (const Tensor& p : lm.parameters()) CHECK_FALSE(p.grad().defined());
      return g;
    };
    CHECK(max_abs_diff(inner_grad(false), inner_grad(true)) <= 1e-12);
    REQUIRE(plain.size() == checkpointed.size());
    for (std::size_t i = 0; i < plain.size(); ++i) {
      INFO("parameter " << i);
      CHECK(max_abs_diff(plain[i], checkpointed[i]) <= 1e-12);
    }
  }
}
