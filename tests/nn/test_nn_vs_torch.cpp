// test_nn_vs_torch.cpp — whole modules against PyTorch: one TransformerBlock in each placement
// (post, pre, b2t) and a 2-layer TransformerLM (pre and post, tied head), forward and backward.
// The reference (tests/reference/nn_reference.txt, written by make_nn_reference.py) holds every
// parameter by tapegrad's name, the input, the output, the loss and every gradient. Each module
// is built in float64, takes the reference's parameters name for name (one to one: a missing or
// extra name fails), and must match every gradient to 1e-5 relative; the pre block also runs in
// float32 against the same float64 data. A gradient-penalty loss through the LM (pre, post,
// b2t) checks second derivatives: its parameter gradients must match to 1e-10.
#include <fstream>
#include <string>
#include <vector>

#include "support/gradcheck_catch.hpp"
#include "support/reference.hpp"

using namespace tapegrad;
using tapegrad::testing::compare_tensors;
using tapegrad::testing::ReferenceFile;

namespace {

// The settings make_nn_reference.py uses.
constexpr std::int64_t kDModel = 8, kHeads = 2, kDFF = 16;
constexpr std::int64_t kVocab = 11, kMaxSeqLen = 8, kLayers = 2;

// |actual − expected| <= atol + rtol·|expected|. float64: 1e-5 relative, and an absolute floor
// far below any value that matters, for entries that are ~0 by cancellation.
struct Tolerance {
  double atol, rtol;
};
constexpr Tolerance kFloat64{1e-12, 1e-5};
constexpr Tolerance kFloat32{1e-5, 1e-4};

const ReferenceFile& nn_reference() {
  static const ReferenceFile file(std::string(TAPEGRAD_REFERENCE_DIR) + "/nn_reference.txt",
                                  "tests/reference/make_nn_reference.py");
  return file;
}

// Copies <case>.param.<name> into the module's parameter <name>, as `dtype` (one to one).
void load_parameters(nn::Module& module, const std::string& case_name, DType dtype) {
  tapegrad::testing::load_reference_parameters(module, nn_reference(), case_name + ".param.", dtype);
}

// llm.c's check_tensor: "<name>: TENSOR OK, maxdiff = ..." or the first mismatching pairs.
void check_tensor(const std::string& name, const Tensor& actual, const Tensor& expected, Tolerance tol) {
  if (!actual.defined()) {
    FAIL_CHECK(name << ": undefined (never computed, or no gradient reached it)");
    return;
  }
  const auto c = compare_tensors(name, actual, expected, tol.atol, tol.rtol);
  INFO(c.report);
  CHECK(c.ok);
}

// Every parameter's gradient against <case>.grad.<name>.
void check_parameter_grads(nn::Module& module, const std::string& case_name, Tolerance tol) {
  for (const auto& [name, p] : module.named_parameters())
    check_tensor("grad " + name, p.grad(), nn_reference().get(case_name + ".grad." + name), tol);
}

nn::TransformerBlockConfig block_config(nn::Placement placement, DType dtype) {
  nn::TransformerBlockConfig c;
  c.d_model = kDModel;
  c.n_heads = kHeads;
  c.d_ff = kDFF;
  c.activation = nn::Activation::gelu;  // exact
  c.norm = nn::NormKind::layernorm;
  c.placement = placement;
  c.causal = true;
  c.dropout = 0.0;
  c.attn_dropout = 0.0;
  c.dtype = dtype;
  return c;
}

struct BlockRun {
  std::shared_ptr<nn::TransformerBlock> block;
  Tensor x, y, loss;
};

// One block with the reference's parameters of `case_name`, run forward and backward on
// loss = sum(y ⊙ R).
BlockRun run_block(nn::Placement placement, const std::string& case_name, DType dtype) {
  const ReferenceFile& ref = nn_reference();
  BlockRun run;
  run.block = std::make_shared<nn::TransformerBlock>(block_config(placement, dtype));
  load_parameters(*run.block, case_name, dtype);
  run.x = ref.get(case_name + ".x", dtype).requires_grad_();
  run.y = run.block->forward(run.x);
  run.loss = sum(mul(run.y, ref.get(case_name + ".R", dtype)));
  run.loss.backward();
  return run;
}

void check_block(const BlockRun& run, const std::string& case_name, Tolerance tol) {
  const ReferenceFile& ref = nn_reference();
  check_tensor("y", run.y, ref.get(case_name + ".y"), tol);
  check_tensor("loss", run.loss, ref.get(case_name + ".loss"), tol);
  check_tensor("dx", run.x.grad(), ref.get(case_name + ".dx"), tol);
  check_parameter_grads(*run.block, case_name, tol);
}

}  // namespace

TEST_CASE("TransformerBlock matches PyTorch in float64", "[nn][transformer][reference]") {
  for (nn::Placement placement : {nn::Placement::post, nn::Placement::pre, nn::Placement::b2t}) {
    const std::string case_name = "block_" + nn::placement_name(placement);
    DYNAMIC_SECTION(case_name) {
      const BlockRun run = run_block(placement, case_name, DType::float64);
      check_block(run, case_name, kFloat64);
    }
  }
}

TEST_CASE("TransformerBlock in float32 matches the float64 PyTorch reference", "[nn][transformer][reference]") {
  const BlockRun run = run_block(nn::Placement::pre, "block_pre", DType::float32);
  REQUIRE(run.y.dtype() == DType::float32);
  check_block(run, "block_pre", kFloat32);
}

TEST_CASE("the block reference tells the placements apart", "[nn][transformer][reference]") {
  // The same parameters in another placement give another output: a comparison that passes
  // above is not one that anything would pass.
  const ReferenceFile& ref = nn_reference();
  const BlockRun as_pre = run_block(nn::Placement::pre, "block_post", DType::float64);
  CHECK_FALSE(compare_tensors("y", as_pre.y, ref.get("block_post.y"), kFloat64.atol, kFloat64.rtol).ok);
  const BlockRun as_post = run_block(nn::Placement::post, "block_b2t", DType::float64);
  CHECK_FALSE(compare_tensors("y", as_post.y, ref.get("block_b2t.y"), kFloat64.atol, kFloat64.rtol).ok);
}

TEST_CASE("TransformerLM matches PyTorch in float64", "[nn][transformer_lm][reference]") {
  const ReferenceFile& ref = nn_reference();
  for (nn::Placement placement : {nn::Placement::pre, nn::Placement::post}) {
    const std::string case_name = "lm_" + nn::placement_name(placement);
    DYNAMIC_SECTION(case_name) {
      nn::TransformerLMConfig config;
      config.vocab_size = kVocab;
      config.max_seq_len = kMaxSeqLen;
      config.n_layers = kLayers;
      config.block = block_config(placement, DType::float64);
      config.tie_weights = true;
      auto lm = std::make_shared<nn::TransformerLM>(config);
      load_parameters(*lm, case_name, DType::float64);

      const Tensor tokens = ref.get(case_name + ".tokens"), targets = ref.get(case_name + ".targets");
      const std::int64_t B = tokens.size(0), T = tokens.size(1);
      REQUIRE(T < kMaxSeqLen);  // the unused pos_emb rows must get a zero gradient
      const Tensor logits = lm->forward(tokens);
      const Tensor loss = cross_entropy(logits.reshape({B * T, kVocab}), targets.reshape({B * T}));
      loss.backward();

      check_tensor("logits", logits, ref.get(case_name + ".logits"), kFloat64);
      check_tensor("loss", loss, ref.get(case_name + ".loss"), kFloat64);
      check_parameter_grads(*lm, case_name, kFloat64);
    }
  }
}

TEST_CASE("A gradient penalty through the TransformerLM matches PyTorch: second derivatives", "[nn][transformer_lm][reference][higher_order]") {
  // L = f + ‖∂f/∂h‖² with f the mean cross-entropy and h the embeddings that enter the first
  // block: the parameter gradients of L run the backward of every op backward again.
  const ReferenceFile& ref = nn_reference();
  for (nn::Placement placement : {nn::Placement::pre, nn::Placement::post, nn::Placement::b2t}) {
    const std::string case_name = "penalty_" + nn::placement_name(placement);
    DYNAMIC_SECTION(case_name) {
      nn::TransformerLMConfig config;
      config.vocab_size = kVocab;
      config.max_seq_len = kMaxSeqLen;
      config.n_layers = kLayers;
      config.block = block_config(placement, DType::float64);
      auto lm = std::make_shared<nn::TransformerLM>(config);
      load_parameters(*lm, case_name, DType::float64);
      Tensor h;  // the first block's input, caught by a forward pre-hook
      const HookHandle catch_h =
          lm->blocks->at<nn::TransformerBlock>(0)->register_forward_pre_hook([&](nn::Module&, TensorList& in) { h = in[0]; });

      const Tensor tokens = ref.get(case_name + ".tokens"), targets = ref.get(case_name + ".targets");
      const std::int64_t N = tokens.numel();
      const Tensor f = cross_entropy(lm->forward(tokens).reshape({N, kVocab}), targets.reshape({N}));
      const Tensor dh = grad({f}, {h}, {}, {.create_graph = true})[0];
      const Tensor penalty = sum(mul(dh, dh));
      const Tensor loss = add(f, penalty);
      loss.backward();

      constexpr Tolerance k1e10{1e-10, 1e-10};
      check_tensor("f", f, ref.get(case_name + ".f"), k1e10);
      check_tensor("penalty", penalty, ref.get(case_name + ".penalty"), k1e10);
      check_parameter_grads(*lm, case_name, k1e10);
    }
  }
}
