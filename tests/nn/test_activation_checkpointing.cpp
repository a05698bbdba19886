// test_activation_checkpointing.cpp — checkpointed transformer blocks
// (set_activation_checkpointing): the loss and every parameter's gradient bitwise equal to the
// plain model's, float32 and float64, with dropout, in Pre-LN, Post-LN and B2T, for an LM and a
// seq2seq model; the activations kept by the forward shrink to the blocks' inputs.
#include "nn/nn_helpers.hpp"

using namespace tapegrad;

namespace {

bool same(const Tensor& a, const Tensor& b) {
  return a.defined() && b.defined() && a.shape() == b.shape() && a.to_vector() == b.to_vector();
}

struct Result {
  double loss = 0, next_draw = 0;
  nn::NamedTensors grads;
};

template <typename Model, typename Loss>
Result run(Model& model, bool checkpointed, Loss&& loss_of) {
  model.set_activation_checkpointing(checkpointed);
  model.zero_grad();
  manual_seed(77);  // the dropout masks
  const Tensor loss = loss_of(model);
  loss.backward();
  Result r{loss.item(), default_generator().next_double(), {}};
  for (const auto& [name, p] : model.named_parameters()) r.grads.emplace_back(name, p.grad());
  return r;
}

void check_equal(const Result& a, const Result& b) {
  CHECK(a.loss == b.loss);
  CHECK(a.next_draw == b.next_draw);
  REQUIRE(a.grads.size() == b.grads.size());
  for (std::size_t i = 0; i < a.grads.size(); ++i) {
    INFO(a.grads[i].first);
    CHECK(same(a.grads[i].second, b.grads[i].second));
  }
}

}  // namespace

TEST_CASE("activation checkpointing: LM gradients bitwise equal, with dropout", "[checkpoint][transformer]") {
  for (DType dtype : {DType::float32, DType::float64})
    for (const nn::Placement& p : {nn::Placement::pre, nn::Placement::post, nn::Placement::b2t}) {
      INFO(dtype_name(dtype) << " " << p.name);
      nn::TransformerLMConfig c = tapegrad::testing::tiny_lm(11, 8, 3);
      c.block.placement = p;
      c.block.dtype = dtype;
      c.block.dropout = 0.1;
      c.block.attn_dropout = 0.1;
      manual_seed(5);
      nn::TransformerLM lm(c);
      const Tensor tokens = tensor({1, 5, 2, 7, 3, 0, 4, 6, 10, 9, 8, 1, 2, 3}, {2, 7}, DType::int64);
      const Tensor targets = tensor({5, 2, 7, 3, 0, 4, 6, 9, 8, 1, 2, 3, 4, 5}, {14}, DType::int64);
      auto loss_of = [&](nn::TransformerLM& m) { return cross_entropy(m.forward(tokens).reshape({14, 11}), targets); };
      const Result plain = run(lm, false, loss_of);
      const Result checkpointed = run(lm, true, loss_of);
      check_equal(plain, checkpointed);
    }
}

TEST_CASE("activation checkpointing: seq2seq gradients bitwise equal (encoder memory, cross-attention)", "[checkpoint][transformer]") {
  for (DType dtype : {DType::float32, DType::float64})
    for (const nn::Placement& p : {nn::Placement::pre, nn::Placement::post, nn::Placement::b2t}) {
      INFO(dtype_name(dtype) << " " << p.name);
      nn::Seq2SeqConfig c = tapegrad::testing::tiny_seq2seq(2, 2, p);
      c.block.dtype = dtype;
      c.block.dropout = 0.1;
      manual_seed(6);
      nn::Seq2SeqTransformer model(c);
      const Tensor src = tensor({1, 2, 3, 4, 5, 6, 7, 8}, {2, 4}, DType::int64);
      const Tensor tgt = tensor({1, 9, 2, 3, 4, 5}, {2, 3}, DType::int64);
      const Tensor out = tensor({9, 2, 11, 4, 5, 11}, {6}, DType::int64);
      auto loss_of = [&](nn::Seq2SeqTransformer& m) { return cross_entropy(m.forward(src, tgt).reshape({6, 12}), out); };
      check_equal(run(model, false, loss_of), run(model, true, loss_of));
    }
}

TEST_CASE("activation checkpointing: the forward keeps the blocks' inputs, not their activations", "[checkpoint][transformer][memory]") {
  nn::TransformerLMConfig c = tapegrad::testing::tiny_lm(64, 64, 8);
  c.block.d_model = 64;
  c.block.n_heads = 4;
  c.block.d_ff = 256;
  nn::TransformerLM lm(c);
  std::vector<std::int64_t> ids(4 * 64);
  for (std::size_t i = 0; i < ids.size(); ++i) ids[i] = static_cast<std::int64_t>((i * 7) % 64);
  const Tensor tokens = Tensor::from_vector(ids, {4, 64});
  auto kept_by_forward = [&](bool checkpointed) {
    lm.set_activation_checkpointing(checkpointed);
    const std::size_t before = Storage::live_bytes();
    Storage::reset_peak_live_bytes();
    Tensor logits = lm.forward(tokens);
    const std::size_t kept = Storage::live_bytes() - before;
    Tensor loss = sum(logits);
    loss.backward();
    lm.zero_grad();
    return kept;
  };
  const std::size_t plain = kept_by_forward(false), checkpointed = kept_by_forward(true);
  const std::size_t block_input = 4 * 64 * 64 * 4;  // (B, T, C) float32
  INFO("plain " << plain << " bytes, checkpointed " << checkpointed);
  CHECK(checkpointed < plain / 5);
  // one input per block (8), the final norm's and the head's inputs, the logits (1 each), and a
  // few small ones (positions, the final norm's mean and rstd): instead of every activation
  CHECK(checkpointed <= 12 * block_input);
}
