// test_seq2seq_and_init.cpp — Seq2SeqTransformer, DeepNorm constants and the init schemes.
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "nn/nn_helpers.hpp"

using namespace tapegrad;
using Catch::Contains;
using nn::NormKind;
using nn::Placement;
using tapegrad::testing::max_abs_diff;
using tapegrad::testing::randomize_;
using tapegrad::testing::std_of;
using tapegrad::testing::argmax_row;
using tapegrad::testing::tiny_lm;
using tapegrad::testing::tiny_seq2seq;
using tapegrad::testing::tokens_of;

TEST_CASE("Seq2SeqTransformer: shapes, masks, causality, greedy_decode", "[transformer][seq2seq]") {
  manual_seed(7);
  nn::Seq2SeqTransformer model(tiny_seq2seq(2, 2));
  CHECK(model.decoder->at<nn::TransformerBlock>(0)->cross_attn != nullptr);
  CHECK(model.encoder->at<nn::TransformerBlock>(0)->cross_attn == nullptr);

  const std::vector<std::int64_t> src_ids{1, 2, 3, 4, 5, 6, 7, 8, 9, 0};
  const std::vector<std::int64_t> tgt_ids{0, 3, 5, 7, 1, 11, 2, 4};
  const Tensor src = tokens_of(src_ids, 2), tgt = tokens_of(tgt_ids, 2);  // (2, 5), (2, 4)
  const Tensor memory = model.encode(src);
  CHECK(memory.shape() == Shape{2, 5, 8});
  const Tensor logits = model.forward(src, tgt);
  CHECK(logits.shape() == Shape{2, 4, 12});
  CHECK_CLOSE(logits, model.decode(tgt, memory), 0.0);

  // the encoder sees the whole source: its last token changes the memory at position 0
  std::vector<std::int64_t> src2 = src_ids;
  src2[4] = 0;
  CHECK(max_abs_diff(narrow(model.encode(tokens_of(src2, 2)), 1, 0, 1), narrow(memory, 1, 0, 1)) > 1e-6);
  // the decoder is causal: target token 2 changes no logit before position 2
  std::vector<std::int64_t> tgt2 = tgt_ids;
  tgt2[2] = 9;
  const Tensor logits2 = model.forward(src, tokens_of(tgt2, 2));
  CHECK_CLOSE(narrow(logits2, 1, 0, 2), narrow(logits, 1, 0, 2), 0.0);
  CHECK(max_abs_diff(narrow(logits2, 1, 2, 1), narrow(logits, 1, 2, 1)) > 1e-6);
  // a padded source token is invisible to the encoder and to the cross-attention
  const Tensor pad = tensor({0, 0, 0, 1, 1, 0, 0, 0, 0, 1}, {2, 5}, DType::int64);
  std::vector<std::int64_t> src3 = src_ids;
  src3[3] = 9;
  src3[9] = 5;
  CHECK_CLOSE(model.forward(tokens_of(src3, 2), tgt, pad), model.forward(src, tgt, pad), 0.0);
  CHECK(max_abs_diff(model.forward(src, tgt, pad), logits) > 1e-6);

  // greedy_decode without an eos that occurs: max_len tokens, each the argmax given the prefix
  const std::int64_t bos = 0, max_len = 6;
  const Tensor full_out = model.greedy_decode(src, bos, -1, max_len);
  REQUIRE(full_out.shape() == Shape{2, max_len});
  const std::vector<std::int64_t> full_seq = full_out.to_vector<std::int64_t>();
  {
    NoGradGuard no_grad;
    const std::vector<double> replay = model.forward(src, full_out).to_vector();  // (2, 6, 12)
    for (std::int64_t b = 0; b < 2; ++b) {
      CHECK(full_seq[b * max_len] == bos);
      for (std::int64_t t = 1; t < max_len; ++t)
        CHECK(full_seq[b * max_len + t] == argmax_row(replay, b * max_len + t - 1, 12));
    }
  }
  // with an eos: a row that emits it pads with eos from then on, and decoding stops once every
  // row has emitted it. Tried with each token the rows emit, against the run without eos.
  bool saw_early_stop = false, saw_padding = false;
  for (std::int64_t eos = 0; eos < 12; ++eos) {
    std::int64_t first[2] = {max_len, max_len};  // first column at which each row emits eos
    for (std::int64_t b = 0; b < 2; ++b)
      for (std::int64_t t = max_len - 1; t >= 1; --t)
        if (full_seq[b * max_len + t] == eos) first[b] = t;
    if (first[0] == max_len && first[1] == max_len) continue;
    INFO("eos " << eos << ", first emitted at columns " << first[0] << " and " << first[1]);
    const std::int64_t len = std::max(first[0], first[1]) < max_len ? std::max(first[0], first[1]) + 1 : max_len;
    saw_early_stop |= len < max_len;
    saw_padding |= first[0] != first[1] && std::min(first[0], first[1]) + 1 < len;
    const Tensor out = model.greedy_decode(src, bos, eos, max_len);
    REQUIRE(out.shape() == Shape{2, len});
    const std::vector<std::int64_t> seq = out.to_vector<std::int64_t>();
    for (std::int64_t b = 0; b < 2; ++b)
      for (std::int64_t t = 0; t < len; ++t) {
        INFO("row " << b << ", column " << t);
        CHECK(seq[b * len + t] == (t <= first[b] ? full_seq[b * max_len + t] : eos));
      }
  }
  CHECK(saw_early_stop);
  CHECK(saw_padding);
  // max_len is capped by max_seq_len
  CHECK(model.greedy_decode(src, bos, -1, 100).shape() == Shape{2, 8});
}

TEST_CASE("DeepNorm constants follow Wang et al. 2022 and reach the blocks", "[transformer][deepnorm]") {
  for (std::int64_t M : {1, 6, 18}) {
    CHECK(nn::deepnorm_decoder_only(M).alpha == Approx(std::pow(2.0 * M, 0.25)));
    CHECK(nn::deepnorm_decoder_only(M).beta == Approx(std::pow(8.0 * M, -0.25)));
    CHECK(nn::deepnorm_encoder_only(M).alpha == Approx(std::pow(2.0 * M, 0.25)));
    CHECK(nn::deepnorm_encoder_only(M).beta == Approx(std::pow(8.0 * M, -0.25)));
    CHECK(nn::deepnorm_decoder(M).alpha == Approx(std::pow(3.0 * M, 0.25)));
    CHECK(nn::deepnorm_decoder(M).beta == Approx(std::pow(12.0 * M, -0.25)));
    for (std::int64_t N : {1, 6, 12}) {
      CHECK(nn::deepnorm_encoder(N, M).alpha == Approx(0.81 * std::pow(std::pow(N, 4) * M, 1.0 / 16)));
      CHECK(nn::deepnorm_encoder(N, M).beta == Approx(0.87 * std::pow(std::pow(N, 4) * M, -1.0 / 16)));
    }
  }
  CHECK(nn::deepnorm_decoder_only(8).alpha == Approx(2.0));  // (16)^¼
  CHECK(nn::deepnorm_decoder_only(2).beta == Approx(0.5));   // (16)^-¼

  nn::TransformerLMConfig c = tiny_lm(8, 8, 3);
  c.block.placement = Placement::deepnorm;
  nn::TransformerLM lm(c);
  for (std::size_t l = 0; l < 3; ++l) {
    auto block = lm.blocks->at<nn::TransformerBlock>(l);
    CHECK(block->attn_residual->alpha == Approx(std::pow(6.0, 0.25)));
    CHECK(block->ffn_residual->alpha == Approx(std::pow(6.0, 0.25)));
  }
  nn::Seq2SeqTransformer model(tiny_seq2seq(4, 2, Placement::deepnorm));
  CHECK(model.encoder->at<nn::TransformerBlock>(0)->ffn_residual->alpha == Approx(nn::deepnorm_encoder(4, 2).alpha));
  CHECK(model.decoder->at<nn::TransformerBlock>(1)->cross_residual->alpha == Approx(nn::deepnorm_decoder(2).alpha));
}

TEST_CASE("Initialization schemes: gpt2, xavier, b2t scaling, deepnorm", "[transformer][init]") {
  nn::TransformerLMConfig c = tiny_lm(512, 128, 2);
  c.block.d_model = 64;
  c.block.n_heads = 4;
  c.block.d_ff = 256;

  SECTION("gpt2: N(0, 0.02²), residual projections N(0, (0.02/√(2L))²), biases 0") {
    manual_seed(8);
    nn::TransformerLM lm(c);
    auto block = lm.blocks->at<nn::TransformerBlock>(1);
    CHECK(std_of(lm.tok_emb->weight) == Approx(0.02).epsilon(0.05));
    CHECK(std_of(lm.pos_emb->weight) == Approx(0.02).epsilon(0.05));
    CHECK(std_of(block->attn->qkv->weight) == Approx(0.02).epsilon(0.05));
    CHECK(std_of(block->ffn->fc1->weight) == Approx(0.02).epsilon(0.05));
    CHECK(std_of(block->attn->out_proj->weight) == Approx(0.01).epsilon(0.05));  // 0.02/√4
    CHECK(std_of(block->ffn->fc2->weight) == Approx(0.01).epsilon(0.05));
    CHECK(block->attn->qkv->bias.to_vector() == std::vector<double>(192, 0.0));
    CHECK(block->ffn->fc2->bias.to_vector() == std::vector<double>(64, 0.0));
    auto* norm = dynamic_cast<nn::LayerNorm*>(block->ffn_residual->norm.get());
    REQUIRE(norm);
    CHECK(norm->weight.to_vector() == std::vector<double>(64, 1.0));
  }
  SECTION("gpt2-unscaled: gpt2 without the 1/√(2L) of the residual projections; the name round-trips") {
    manual_seed(8);
    c.init = nn::InitScheme::gpt2_unscaled;
    c.tie_weights = false;
    nn::TransformerLM lm(c);
    auto block = lm.blocks->at<nn::TransformerBlock>(1);
    CHECK(std_of(block->attn->qkv->weight) == Approx(0.02).epsilon(0.05));
    CHECK(std_of(block->attn->out_proj->weight) == Approx(0.02).epsilon(0.05));
    CHECK(std_of(block->ffn->fc2->weight) == Approx(0.02).epsilon(0.05));
    CHECK(std_of(lm.lm_head->weight) == Approx(0.02).epsilon(0.05));
    CHECK(std_of(lm.tok_emb->weight) == Approx(0.02).epsilon(0.05));
    CHECK(nn::init_scheme_name(nn::InitScheme::gpt2_unscaled) == "gpt2-unscaled");
    CHECK(nn::init_scheme_from_name("gpt2-unscaled") == nn::InitScheme::gpt2_unscaled);
    CHECK_THROWS_WITH(nn::init_scheme_from_name("gpt3"), Catch::Contains("gpt2-unscaled"));
    CHECK(nn::llama_config({}).init == nn::InitScheme::gpt2_unscaled);  // Meta's recipe scales nothing
  }
  SECTION("xavier: U(±√(6/(in+out))), embeddings N(0, 1/C)") {
    manual_seed(9);
    c.init = nn::InitScheme::xavier;
    nn::TransformerLM lm(c);
    const Tensor w = lm.blocks->at<nn::TransformerBlock>(0)->ffn->fc1->weight;  // (256, 64)
    const double bound = std::sqrt(6.0 / (64 + 256));
    const std::vector<double> v = w.to_vector();
    CHECK(*std::max_element(v.begin(), v.end()) <= bound);
    CHECK(*std::min_element(v.begin(), v.end()) >= -bound);
    CHECK(std_of(w) == Approx(bound / std::sqrt(3.0)).epsilon(0.05));
    CHECK(std_of(lm.tok_emb->weight) == Approx(1.0 / 8.0).epsilon(0.05));
  }
  SECTION("b2t scaling divides every block Linear weight by √L, nothing else; off by default") {
    c.block.placement = Placement::b2t;
    c.n_layers = 4;
    c.block.dtype = DType::float64;
    manual_seed(10);
    nn::TransformerLM off_by_default(c);
    c.b2t_scaling = true;
    manual_seed(10);
    nn::TransformerLM by_default(c);  // (named for the old default: the scaled model)
    c.b2t_scaling = false;
    manual_seed(10);
    nn::TransformerLM unscaled(c);
    std::vector<std::string> linear_weights;
    for (std::size_t l = 0; l < 4; ++l)
      for (auto& [name, m] : unscaled.blocks->at<nn::TransformerBlock>(l)->named_modules())
        if (dynamic_cast<nn::Linear*>(m.get()))
          linear_weights.push_back("blocks." + std::to_string(l) + "." + name + ".weight");
    REQUIRE(linear_weights.size() == 16);  // qkv, out_proj, fc1, fc2 per block
    const auto scaled_params = by_default.named_parameters(), plain_params = unscaled.named_parameters();
    REQUIRE(scaled_params.size() == plain_params.size());
    std::int64_t n_scaled = 0;
    for (std::size_t i = 0; i < plain_params.size(); ++i) {
      const std::string& name = plain_params[i].first;
      INFO(name);
      const bool is_linear = std::find(linear_weights.begin(), linear_weights.end(), name) != linear_weights.end();
      const Tensor expected = is_linear ? mul(plain_params[i].second, 0.5) : plain_params[i].second;  // 1/√4
      CHECK_CLOSE(scaled_params[i].second, expected, 1e-15);
      n_scaled += is_linear;
    }
    CHECK(n_scaled == 16);
    const auto default_params = off_by_default.named_parameters();
    for (std::size_t i = 0; i < plain_params.size(); ++i) CHECK_CLOSE(default_params[i].second, plain_params[i].second, 0.0);

    // Seq2Seq: each side by its own depth, 4 encoder layers (· 1/2) and 1 decoder layer (· 1)
    nn::Seq2SeqConfig s = tiny_seq2seq(4, 1, Placement::b2t);
    s.block.dtype = DType::float64;
    s.b2t_scaling = true;
    manual_seed(12);
    nn::Seq2SeqTransformer scaled_model(s);
    s.b2t_scaling = false;
    manual_seed(12);
    nn::Seq2SeqTransformer plain_model(s);
    auto enc = [](nn::Seq2SeqTransformer& m) { return m.encoder->at<nn::TransformerBlock>(3)->ffn->fc1->weight; };
    auto dec = [](nn::Seq2SeqTransformer& m) {
      return m.decoder->at<nn::TransformerBlock>(0)->cross_attn->kv_proj->weight;
    };
    CHECK_CLOSE(enc(scaled_model), mul(enc(plain_model), 0.5), 1e-15);
    CHECK_CLOSE(dec(scaled_model), dec(plain_model), 0.0);
    CHECK(max_abs_diff(enc(plain_model), zeros(enc(plain_model).shape(), DType::float64)) > 1e-3);
  }
  SECTION("deepnorm: Xavier-normal, gain β on v, out_proj and the FFN, gain 1 on q and k") {
    c.block.placement = Placement::deepnorm;
    manual_seed(11);
    nn::TransformerLM lm(c);
    const double beta = nn::deepnorm_decoder_only(2).beta;  // 0.5
    auto block = lm.blocks->at<nn::TransformerBlock>(0);
    const Tensor qkv = block->attn->qkv->weight;  // (3C, C), rows q | k | v
    CHECK(std_of(narrow(qkv, 0, 0, 64)) == Approx(std::sqrt(2.0 / 128)).epsilon(0.05));
    CHECK(std_of(narrow(qkv, 0, 64, 64)) == Approx(std::sqrt(2.0 / 128)).epsilon(0.05));
    CHECK(std_of(narrow(qkv, 0, 128, 64)) == Approx(beta * std::sqrt(2.0 / 128)).epsilon(0.05));
    CHECK(std_of(block->attn->out_proj->weight) == Approx(beta * std::sqrt(2.0 / 128)).epsilon(0.05));
    CHECK(std_of(block->ffn->fc1->weight) == Approx(beta * std::sqrt(2.0 / 320)).epsilon(0.05));
    CHECK(std_of(block->ffn->fc2->weight) == Approx(beta * std::sqrt(2.0 / 320)).epsilon(0.05));
  }
}

