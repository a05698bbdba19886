// test_placements_recent.cpp — the placements that followed Pre-LN (nn/placement/): Peri-LN
// (peri_ln.cpp), OLMo 2's reordered norm (olmo2.cpp), Mix-LN (mix_ln.cpp) and LayerNorm
// Scaling (ln_scaling.cpp). Each block, with LayerNorm and RMSNorm, with and without
// cross-attention, at every place of its stack, against its formula written out with plain ops
// (the norms too); a float64 gradcheck of each; Peri-LN's output norms by name; Mix-LN's and
// LayerNorm Scaling's blocks against Post-LN and Pre-LN blocks holding the same weights, in LMs
// and seq2seq models; mix_ln_ratio refused by name where it is wrong, and kept by model files,
// old ones without it loading with its default.
#include <algorithm>
#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "io/io_helpers.hpp"
#include "nn/nn_helpers.hpp"
#include "nn/lm_gradcheck.hpp"
#include "support/gradcheck_catch.hpp"

using namespace tapegrad;
using namespace tapegrad::testing;  // param, randomize_parameters_, with_parameters, tiny_lm, ...
using Catch::Contains;
using nn::NormKind;
using nn::Placement;

namespace {

// (B, T, C) inputs, (B, Tk, C) memories, in stacks of kLayers blocks; all in float64
constexpr std::int64_t kB = 2, kT = 3, kC = 4, kTk = 2, kLayers = 4;
constexpr DType f64 = DType::float64;

const std::vector<Placement>& recent() {
  static const std::vector<Placement> placements = {Placement::peri, Placement::olmo2, Placement::mixln, Placement::lns};
  return placements;
}

nn::TransformerBlockConfig block_config(const Placement& placement, const NormKind& norm, bool cross) {
  nn::TransformerBlockConfig c{.d_model = kC, .n_heads = 2, .d_ff = 8, .norm = norm, .placement = placement,
                               .causal = true, .cross_attention = cross, .dtype = f64};
  if (placement == Placement::mixln) c.mix_ln_ratio = 0.5;  // blocks 1 and 2 of 4 Post-LN, 3 and 4 Pre-LN
  return c;
}

// Block i (0-based) of a stack of kLayers: decoder-only, or the decoder of a seq2seq model.
nn::Stack stack_at(bool cross, std::int64_t i) {
  return (cross ? nn::Stack::decoder(2, kLayers) : nn::Stack::decoder_only(kLayers)).at(i);
}

// The norms written out: LayerNorm g ⊙ (u − μ)/√(σ² + ε) + b, RMSNorm g ⊙ u/√(mean(u²) + ε),
// over the last dim, with the module's own g, b and ε.
Tensor naive_norm(nn::Norm& n, const Tensor& u) {
  if (auto* ln = dynamic_cast<nn::LayerNorm*>(&n)) {
    const Tensor centered = sub(u, mean(u, {-1}, true));
    const Tensor variance = mean(mul(centered, centered), {-1}, true);
    return add(mul(div(centered, sqrt(add(variance, ln->options.eps()))), ln->weight), ln->bias);
  }
  auto& rms = dynamic_cast<nn::RMSNorm&>(n);
  return mul(div(u, sqrt(add(mean(mul(u, u), {-1}, true), rms.options.eps()))), rms.weight);
}

// Each placement's block formula, one sublayer at a time, from the block's own attention and
// FFN: F are the sublayers in order, N their norms, N_out their output norms, l the block's
// place 1..L in its stack.
Tensor naive_block(nn::TransformerBlock& b, const Tensor& x, const nn::BlockContext& ctx) {
  std::vector<std::function<Tensor(const Tensor&)>> F{[&](const Tensor& h) { return b.attn->forward(h, ctx.key_padding_mask); }};
  std::vector<nn::Residual*> r{b.attn_residual.get()};
  if (b.cross_attn) {
    F.push_back([&](const Tensor& h) { return b.cross_attn->forward_cross(h, ctx.memory, ctx.memory_padding_mask); });
    r.push_back(b.cross_residual.get());
  }
  F.push_back([&](const Tensor& h) { return b.ffn->forward(h); });
  r.push_back(b.ffn_residual.get());
  auto N = [&](std::size_t s, const Tensor& u) { return naive_norm(*r[s]->norm, u); };
  auto N_out = [&](std::size_t s, const Tensor& u) { return naive_norm(*r[s]->norm_out, u); };
  const std::int64_t l = b.stack.index + 1, L = b.stack.layers();
  const std::string& p = b.config.placement.name;
  Tensor h = x;
  for (std::size_t s = 0; s < F.size(); ++s) {
    if (p == "peri") h = add(h, N_out(s, F[s](N(s, h))));          // h + N_out(F(N(h)))
    else if (p == "olmo2") h = add(h, N(s, F[s](h)));              // h + N(F(h))
    else if (p == "lns") h = add(h, F[s](div(N(s, h), std::sqrt(double(l)))));  // h + F(N(h)/√l)
    else if (p == "mixln" && double(l) <= std::floor(b.config.mix_ln_ratio * double(L))) h = N(s, add(h, F[s](h)));  // post
    else if (p == "mixln") h = add(h, F[s](N(s, h)));              // pre
    else FAIL("no naive formula for " << p);
  }
  return h;
}

// What the block reads besides x: padding masks (1 = padded: the last position of row 2) and,
// with cross-attention, the memory.
nn::BlockContext context(bool cross, const Tensor& memory) {
  nn::BlockContext ctx;
  ctx.key_padding_mask = tensor({0, 0, 0, 0, 0, 1}, {kB, kT}, DType::int64);
  if (cross) {
    ctx.memory = memory;
    ctx.memory_padding_mask = tensor({0, 0, 0, 1}, {kB, kTk}, DType::int64);
  }
  return ctx;
}

// A copy of `from`'s weights in a block of another placement, built for the same stack.
std::shared_ptr<nn::TransformerBlock> same_weights(const nn::TransformerBlock& from, const Placement& placement) {
  nn::TransformerBlockConfig c = from.config;
  c.placement = placement;
  c.mix_ln_ratio = nn::TransformerBlockConfig{}.mix_ln_ratio;
  auto to = std::make_shared<nn::TransformerBlock>(c, from.stack);
  load_state_dict(*to, state_dict(from));
  return to;
}

}  // namespace

TEST_CASE("Peri-LN, OLMo 2, Mix-LN and LayerNorm Scaling blocks equal their formulas written out", "[residual][recent]") {
  std::uint64_t seed = 300;
  for (const Placement& p : recent())
    for (const NormKind& norm : {NormKind::layernorm, NormKind::rmsnorm})
      for (bool cross : {false, true})
        for (std::int64_t i = 0; i < kLayers; ++i) {
          INFO(p.name << " / " << norm.name << (cross ? " / cross-attention" : "") << " / block " << i + 1 << " of 4");
          manual_seed(seed);
          nn::TransformerBlock block(block_config(p, norm, cross), stack_at(cross, i));
          randomize_parameters_(block, seed, 0.5);  // away from unit gains
          const Tensor x = param({kB, kT, kC}, seed + 1), memory = param({kB, kTk, kC}, seed + 2);
          const nn::BlockContext ctx = context(cross, memory);
          CHECK_CLOSE(block.forward(x, ctx), naive_block(block, x, ctx), 1e-13);
          seed += 10;
        }
}

TEST_CASE("Peri-LN, OLMo 2, Mix-LN and LayerNorm Scaling blocks pass a float64 gradcheck", "[residual][recent]") {
  std::uint64_t seed = 500;
  for (const Placement& p : recent())
    for (const NormKind& norm : {NormKind::layernorm, NormKind::rmsnorm})
      for (bool cross : {false, true})
        for (std::int64_t i : {1, 2}) {  // Mix-LN: a Post-LN and a Pre-LN block; LNS: 1/√2 and 1/√3
          INFO(p.name << " / " << norm.name << (cross ? " / cross-attention" : "") << " / block " << i + 1 << " of 4");
          manual_seed(seed);
          nn::TransformerBlock block(block_config(p, norm, cross), stack_at(cross, i));
          randomize_parameters_(block, seed, 0.5);
          TensorList inputs{param({kB, kT, kC}, seed + 1)};
          if (cross) inputs.push_back(param({kB, kTk, kC}, seed + 2));
          CHECK_GRADCHECK([&](const TensorList& in) { return block.forward(in[0], context(cross, cross ? in[1] : Tensor())); },
                          with_parameters(inputs, block));
          seed += 10;
        }
}

TEST_CASE("Peri-LN: every sublayer has an output norm, named norm_out", "[residual][recent][peri]") {
  nn::TransformerLMConfig c = tiny_lm(8, 4, 4);
  c.block.placement = Placement::peri;
  nn::TransformerLM lm(c);
  std::vector<std::string> names;
  for (const auto& [name, _] : lm.named_parameters())
    if (name.rfind("blocks.3.", 0) == 0 && name.find("_residual.") != std::string::npos) names.push_back(name);
  CHECK(names == std::vector<std::string>{"blocks.3.attn_residual.norm.weight", "blocks.3.attn_residual.norm.bias",
                                          "blocks.3.attn_residual.norm_out.weight", "blocks.3.attn_residual.norm_out.bias",
                                          "blocks.3.ffn_residual.norm.weight", "blocks.3.ffn_residual.norm.bias",
                                          "blocks.3.ffn_residual.norm_out.weight", "blocks.3.ffn_residual.norm_out.bias"});
  REQUIRE(lm.final_norm != nullptr);  // the stream is never normalized in a block
  // two more norms per block than Pre-LN, nothing else
  c.block.placement = Placement::pre;
  nn::TransformerLM pre(c);
  CHECK(lm.named_parameters().size() == pre.named_parameters().size() + 4 * 4);
  // a decoder block's cross-attention sublayer has one too; RMSNorm has a weight only
  nn::Seq2SeqConfig s = tiny_seq2seq(1, 1, Placement::peri);
  s.block.norm = NormKind::rmsnorm;
  nn::Seq2SeqTransformer model(s);
  auto block = model.decoder->at<nn::TransformerBlock>(0);
  REQUIRE(block->cross_residual->norm_out != nullptr);
  CHECK(block->cross_residual->norm_out->type_name() == "RMSNorm");
  CHECK(block->cross_residual->named_parameters().size() == 2);  // norm.weight, norm_out.weight
  // only Peri-LN has them
  for (const nn::PlacementInfo& info : kLibraryPlacements) {
    INFO(info.name);
    CHECK(info.output_norms == (info.name == "peri"));
  }
  CHECK(pre.blocks->at<nn::TransformerBlock>(0)->attn_residual->norm_out == nullptr);
}

TEST_CASE("Mix-LN: Post-LN blocks, then Pre-LN blocks, in every stack", "[residual][recent][mixln]") {
  const Tensor x = param({kB, kT, 8}, 601), memory = param({kB, kTk, 8}, 602);
  // an LM of 8 blocks: ⌊0.25·8⌋ = 2 Post-LN blocks by default (the paper's α = 25%)
  nn::TransformerLMConfig c = tiny_lm(8, 4, 8);
  c.block.d_model = 8;
  c.block.d_ff = 16;
  c.block.dtype = f64;
  c.block.placement = Placement::mixln;
  CHECK(c.block.mix_ln_ratio == 0.25);
  manual_seed(603);
  nn::TransformerLM lm(c);
  randomize_parameters_(lm, 604, 0.5);
  for (std::int64_t i = 0; i < 8; ++i) {
    INFO("block " << i + 1 << " of 8");
    nn::TransformerBlock& block = *lm.blocks->at<nn::TransformerBlock>(i);
    CHECK(block.stack.index == i);
    const Placement expected = i < 2 ? Placement::post : Placement::pre;
    CHECK_CLOSE(block.forward(x), same_weights(block, expected)->forward(x), 1e-14);
    CHECK(max_abs_diff(block.forward(x), same_weights(block, i < 2 ? Placement::pre : Placement::post)->forward(x)) > 1e-3);
  }
  REQUIRE(lm.final_norm != nullptr);
  // ρ = 0 is Pre-LN everywhere: the same model as a pre LM holding the same weights
  c.block.mix_ln_ratio = 0.0;
  nn::TransformerLM all_pre(c);
  load_state_dict(all_pre, state_dict(lm));
  c.block.placement = Placement::pre;
  c.block.mix_ln_ratio = 0.25;
  nn::TransformerLM pre(c);
  load_state_dict(pre, state_dict(lm));
  const Tensor tokens = tensor({1, 2, 3, 0, 4, 5}, {2, 3}, DType::int64);
  CHECK_CLOSE(all_pre.forward(tokens), pre.forward(tokens), 0.0);
  // ρ = 1: every block Post-LN
  c.block.placement = Placement::mixln;
  c.block.mix_ln_ratio = 1.0;
  nn::TransformerLM all_post(c);
  load_state_dict(all_post, state_dict(lm));
  for (std::int64_t i = 0; i < 8; ++i) {
    nn::TransformerBlock& block = *all_post.blocks->at<nn::TransformerBlock>(i);
    CHECK_CLOSE(block.forward(x), same_weights(block, Placement::post)->forward(x), 1e-14);
  }

  // a seq2seq model: each stack takes its own ⌊ρL⌋, here ⌊0.5·4⌋ = 2 encoder and ⌊0.5·2⌋ = 1 decoder blocks
  nn::Seq2SeqConfig s = tiny_seq2seq(4, 2, Placement::mixln);
  s.block.mix_ln_ratio = 0.5;
  s.block.dtype = f64;
  manual_seed(605);
  nn::Seq2SeqTransformer model(s);
  randomize_parameters_(model, 606, 0.5);
  REQUIRE(model.encoder_norm != nullptr);
  REQUIRE(model.decoder_norm != nullptr);
  for (std::int64_t i = 0; i < 4; ++i) {
    INFO("encoder block " << i + 1 << " of 4");
    nn::TransformerBlock& block = *model.encoder->at<nn::TransformerBlock>(i);
    CHECK(block.stack.index == i);
    CHECK_CLOSE(block.forward(x), same_weights(block, i < 2 ? Placement::post : Placement::pre)->forward(x), 1e-14);
  }
  nn::BlockContext ctx;
  ctx.memory = memory;
  for (std::int64_t i = 0; i < 2; ++i) {
    INFO("decoder block " << i + 1 << " of 2");
    nn::TransformerBlock& block = *model.decoder->at<nn::TransformerBlock>(i);
    CHECK_CLOSE(block.forward(x, ctx), same_weights(block, i < 1 ? Placement::post : Placement::pre)->forward(x, ctx), 1e-14);
  }
}

TEST_CASE("LayerNorm Scaling: block l is Pre-LN with its norms' outputs divided by √l", "[residual][recent][lns]") {
  // N(x)/√l is the norm with its gain and bias divided by √l: a pre LM with those weights is
  // the same model; its final norm is not scaled.
  for (const NormKind& norm : {NormKind::layernorm, NormKind::rmsnorm}) {
    INFO(norm.name);
    nn::TransformerLMConfig c = tiny_lm(8, 4, kLayers);
    c.block.dtype = f64;
    c.block.norm = norm;
    c.block.placement = Placement::lns;
    manual_seed(700);
    nn::TransformerLM lns(c);
    randomize_parameters_(lns, 701, 0.5);
    c.block.placement = Placement::pre;
    nn::TransformerLM pre(c);
    load_state_dict(pre, state_dict(lns));
    {
      NoGradGuard no_grad;
      for (std::int64_t i = 0; i < kLayers; ++i) {
        const double s = 1.0 / std::sqrt(double(i + 1));
        auto block = pre.blocks->at<nn::TransformerBlock>(i);
        for (nn::Residual* r : {block->attn_residual.get(), block->ffn_residual.get()})
          for (Tensor t : r->norm->parameters()) t.copy_(mul(t, s));
      }
    }
    const Tensor tokens = tensor({1, 2, 3, 0, 4, 5}, {2, 3}, DType::int64);
    CHECK_CLOSE(lns.forward(tokens), pre.forward(tokens), 1e-12);
    CHECK(max_abs_diff(lns.forward(tokens), nn::TransformerLM(c).forward(tokens)) > 1e-3);  // a pre LM of other weights differs
    // block 1 is Pre-LN itself (1/√1 = 1)
    const Tensor x = param({kB, kT, 16}, 702);
    auto first = lns.blocks->at<nn::TransformerBlock>(0);
    CHECK_CLOSE(first->forward(x), same_weights(*first, Placement::pre)->forward(x), 0.0);
  }
}

TEST_CASE("The recent placements build LMs and seq2seq models with RMSNorm that pass a gradcheck", "[residual][recent]") {
  for (const Placement& p : recent()) {
    INFO(p.name);
    manual_seed(800);
    nn::Seq2SeqConfig s = tiny_seq2seq(2, 2, p);
    s.block = block_config(p, NormKind::rmsnorm, false);
    s.max_seq_len = 3;
    nn::Seq2SeqTransformer model(s);
    randomize_parameters_(model, 801, 0.5);
    REQUIRE(model.decoder_norm != nullptr);
    const Tensor src = tensor({1, 2, 3, 4, 5, 6}, {2, 3}, DType::int64), tgt = tensor({1, 2, 3, 4}, {2, 2}, DType::int64);
    const Tensor w = param({2, 2, 12}, 802);
    CHECK_GRADCHECK([&](const TensorList&) { return sum(mul(model.forward(src, tgt), w)); }, with_parameters({}, model));

    nn::TransformerLMConfig c;
    c.vocab_size = 5;
    c.max_seq_len = 3;
    c.n_layers = 2;
    c.block = block_config(p, NormKind::rmsnorm, false);
    nn::TransformerLM lm(c);
    randomize_parameters_(lm, 803, 0.5);
    CHECK_LM_GRADCHECK(lm, 804);
  }
}

TEST_CASE("mix_ln_ratio and the stack index are checked, by name", "[residual][recent][errors]") {
  nn::TransformerBlockConfig c = block_config(Placement::mixln, NormKind::layernorm, false);
  for (double bad : {-0.25, 1.5, std::nan("")}) {
    c.mix_ln_ratio = bad;
    REQUIRE_THROWS_AS(nn::TransformerBlock(c), ValueError);
    REQUIRE_THROWS_WITH(nn::TransformerBlock(c), Contains("TransformerBlockConfig: mix_ln_ratio must be in [0, 1]"));
  }
  c.mix_ln_ratio = 1.5;
  REQUIRE_THROWS_WITH(nn::TransformerBlock(c), Contains("got 1.5"));
  c.mix_ln_ratio = 0.0;
  CHECK_NOTHROW(nn::TransformerBlock(c));
  c.mix_ln_ratio = 1.0;
  CHECK_NOTHROW(nn::TransformerBlock(c));
  // elsewhere it does not apply, and is refused unless left at its default
  c = block_config(Placement::pre, NormKind::layernorm, false);
  c.mix_ln_ratio = 0.5;
  REQUIRE_THROWS_WITH(nn::TransformerBlock(c), Contains("TransformerBlockConfig: mix_ln_ratio = 0.5 does not apply to "
                                                        "placement pre (only mixln mixes Post-LN and Pre-LN blocks); "
                                                        "leave it at 0.25"));
  // the models validate their blocks' configs the same way
  nn::TransformerLMConfig lm = tiny_lm();
  lm.block.placement = Placement::lns;
  lm.block.mix_ln_ratio = 0.3;
  REQUIRE_THROWS_WITH(lm.validate(), Contains("mix_ln_ratio = 0.3 does not apply to placement lns"));
  // a block's place must be in its stack
  c = block_config(Placement::lns, NormKind::layernorm, false);
  REQUIRE_THROWS_WITH(nn::TransformerBlock(c, nn::Stack::decoder_only(2).at(2)),
                      Contains("TransformerBlock: stack index 2 is not one of its 2 blocks"));
  REQUIRE_THROWS_AS(nn::TransformerBlock(c, nn::Stack::decoder_only(2).at(-1)), ValueError);
  CHECK(nn::TransformerBlock(c, nn::Stack::decoder_only(2).at(1)).stack.index == 1);
  CHECK(nn::TransformerBlock(c).stack.index == 0);  // a block alone is block 1 of 1
}

TEST_CASE("Model files keep mix_ln_ratio, files without it load with its default", "[residual][recent][io]") {
  ScratchDir dir;
  nn::TransformerLMConfig c = tiny_lm(8, 4, 4);
  c.block.placement = Placement::mixln;
  c.block.mix_ln_ratio = 0.5;
  manual_seed(900);
  nn::TransformerLM lm(c);
  const std::string path = dir.file("mixln.tgc");
  io::save_model(lm, path);
  const io::Checkpoint ck = io::load_checkpoint(path);
  REQUIRE(ck.find("config.block.mix_ln_ratio") != nullptr);
  CHECK(std::get<double>(*ck.find("config.block.mix_ln_ratio")) == 0.5);
  const auto rebuilt = io::load_model<nn::TransformerLM>(path);
  CHECK(rebuilt->config == c);
  const Tensor tokens = tensor({1, 2, 3, 0, 4, 5}, {2, 3}, DType::int64);
  CHECK_CLOSE(rebuilt->forward(tokens), lm.forward(tokens), 0.0);
  const auto fields = io::config_fields(c);
  CHECK(std::find(fields.begin(), fields.end(), std::pair<std::string, std::string>{"block.mix_ln_ratio", "0.5"}) !=
        fields.end());

  // A file written before the field existed has no entry: its model gets the default.
  nn::TransformerLMConfig old_config = tiny_lm(8, 4, 2);
  old_config.block.placement = Placement::post;
  nn::TransformerLM old_model(old_config);
  io::Checkpoint old;
  old.kind = "state_dict";
  for (const auto& entry : io::config_metadata(old_config))
    if (entry.first != "config.block.mix_ln_ratio") old.metadata.push_back(entry);
  old.set("config.version", std::int64_t(1));  // files without the field are version 1 (model_config.hpp)
  old.section("model") = state_dict(old_model);
  const auto loaded = io::model_from<nn::TransformerLM>(old);
  CHECK(loaded->config == old_config);
  CHECK(loaded->config.block.mix_ln_ratio == 0.25);
  // the same for a seq2seq model, and for the model file committed as a fuzzing seed before it
  nn::Seq2SeqConfig s = tiny_seq2seq(1, 1, Placement::pre);
  io::Checkpoint old_s2s;
  for (const auto& entry : io::config_metadata(s))
    if (entry.first != "config.block.mix_ln_ratio") old_s2s.metadata.push_back(entry);
  old_s2s.set("config.version", std::int64_t(1));
  CHECK(io::seq2seq_config_from(old_s2s) == s);
  const auto seed_file = io::load_model<nn::TransformerLM>(TAPEGRAD_SOURCE_DIR "/tests/io/corpus/seeds/checkpoint/model_lm.tgc");
  CHECK(seed_file->config.block.mix_ln_ratio == 0.25);
  // a value out of range in a file is refused as an invalid configuration, naming it
  io::Checkpoint bad = ck;
  bad.set("config.block.mix_ln_ratio", 2.0);
  REQUIRE_THROWS_WITH(io::model_from<nn::TransformerLM>(bad),
                      Contains("the stored model configuration is invalid: TransformerBlockConfig: mix_ln_ratio must be in "
                               "[0, 1]") && Contains("got 2"));
}

TEST_CASE("--help lists the recent placements with their formulas and settings", "[residual][recent][registry]") {
  const std::string help = nn::placement_help();
  for (const Placement& p : recent()) {
    INFO(p.name);
    CHECK(help.find("  " + p.name + " ") != std::string::npos);
    CHECK(nn::placement_info(p).final_norm);  // none of them normalizes the stream in the last block
  }
  CHECK(help.find("ρ = mix_ln_ratio (0.25)") != std::string::npos);
  CHECK(help.find("N1_out(Attn(N1(x)))") != std::string::npos);
  CHECK(help.find("Attn(N1(x)/√ℓ)") != std::string::npos);
  CHECK(help.find("advises against a scaled init") != std::string::npos);
  CHECK(nn::placement_info(Placement::mixln).mix_ln_ratio);
  CHECK(!nn::placement_info(Placement::pre).mix_ln_ratio);
}
