// test_tutorial_docs.cpp — the code in docs/tutorial.md and docs/residuals.md compiles and does
// what the pages say.
//
// Each C++ block of the two pages equals a snippet file in docs/snippets/, which is compiled
// here (#include) and its claims checked. Edit both together.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include <catch2/catch.hpp>
#include <tapegrad/tapegrad.hpp>

#include "support/docs.hpp"

using namespace tapegrad;
using tapegrad::testing::cpp_blocks;
using tapegrad::testing::kDocsDir;
using tapegrad::testing::read_text;

namespace {

// Step 5 of the tutorial: an op written outside the library.
#include "../../docs/snippets/tutorial_softplus.inc"

// Runs `body` with std::cout redirected, and returns what it printed.
template <typename Body>
std::string capture_cout(Body body) {
  std::ostringstream captured;
  std::streambuf* old = std::cout.rdbuf(captured.rdbuf());
  body();
  std::cout.rdbuf(old);
  return captured.str();
}

}  // namespace

TEST_CASE("docs/tutorial.md: the blocks are the snippet files", "[docs]") {
  const auto blocks = cpp_blocks(read_text(kDocsDir + "/tutorial.md"));
  const std::vector<std::string> files = {"tutorial_tensors", "tutorial_record",   "tutorial_backward",
                                          "tutorial_look",    "tutorial_softplus", "tutorial_gradcheck"};
  REQUIRE(blocks.size() == files.size());
  for (std::size_t i = 0; i < files.size(); ++i) {
    INFO("block " << i << " of docs/tutorial.md vs docs/snippets/" << files[i] << ".inc");
    CHECK(blocks[i] == read_text(kDocsDir + "/snippets/" + files[i] + ".inc"));
  }
}

TEST_CASE("docs/tutorial.md: 1. tensors and requires_grad", "[docs]") {
#include "../../docs/snippets/tutorial_tensors.inc"
  CHECK(s.item() == 4.5);
  CHECK(s.requires_grad());
  CHECK_FALSE(a.requires_grad());
  CHECK(w.is_leaf());
  CHECK(w.grad().to_vector() == std::vector<double>{1, 2, 3});
  CHECK_FALSE(a.grad().defined());
}

TEST_CASE("docs/tutorial.md: 2. what an op records", "[docs]") {
#include "../../docs/snippets/tutorial_record.inc"
  CHECK(y.item() == 6);
  CHECK(node.name == "mul");
  REQUIRE(node.next_edges.size() == 2);
  CHECK(node.next_edges[0].leaf == x.impl_ptr());
  CHECK_FALSE(node.next_edges[1].leaf);
  CHECK_FALSE(node.next_edges[1].node);
  CHECK(node.needs_input_grad == std::vector<bool>{true, false});
  CHECK(z.grad_fn() == nullptr);
  CHECK_FALSE(z.requires_grad());
}

TEST_CASE("docs/tutorial.md: 3. backward walks the tape, fan-out adds", "[docs]") {
#include "../../docs/snippets/tutorial_backward.inc"
  CHECK(L.item() == 27);
  CHECK(first == 27);
  CHECK(second == 33);
  CHECK_FALSE(x.grad().defined());
}

TEST_CASE("docs/tutorial.md: 4. graph_string and to_dot", "[docs]") {
  std::string dot_text;
  const std::string printed = capture_cout([&] {
#include "../../docs/snippets/tutorial_look.inc"
    CHECK(y.item() == Approx(std::tanh(6.0) + 2));
    dot_text = dot;
  });
  // The listing printed on the page is the one the program prints.
  CHECK(printed == "#1 mul [] <- leaf [] (requires grad), constant []\n"
                   "#2 tanh [] <- #1 mul\n"
                   "#3 add [] <- #2 tanh, leaf [] (requires grad)\n");
  CHECK(read_text(kDocsDir + "/tutorial.md").find("```\n" + printed + "```") != std::string::npos);
  CHECK(dot_text.rfind("digraph tapegrad {", 0) == 0);
  CHECK(dot_text.find("label=\"tanh\\n[]\"") != std::string::npos);
}

TEST_CASE("docs/tutorial.md: 5. the softplus op", "[docs]") {
  Tensor x = tensor({-2, 0, 3}, {3}, DType::float64).requires_grad_();
  Tensor y = softplus(x);
  REQUIRE(y.grad_fn() != nullptr);
  CHECK(y.grad_fn()->name == "softplus");
  const std::vector<double> v = y.to_vector();
  for (std::size_t i = 0; i < 3; ++i) {
    const double xi = x.to_vector()[i];
    CHECK(v[i] == Approx(std::log(1 + std::exp(xi))));
  }
  y.sum().backward();
  const std::vector<double> g = x.grad().to_vector();
  for (std::size_t i = 0; i < 3; ++i) CHECK(g[i] == Approx(1 / (1 + std::exp(-x.to_vector()[i]))));

  // float32 too, and nothing recorded for a tensor that needs no gradient.
  Tensor f = softplus(tensor({1}, {1}));
  CHECK(f.dtype() == DType::float32);
  CHECK(f.item() == Approx(std::log1p(std::exp(1.0))).epsilon(1e-6));
  CHECK(f.grad_fn() == nullptr);

  // The claim of the page: it composes like any op.
  Generator gen(1);
  Tensor in = randn({4, 3}, gen, DType::float64);
  Tensor w = randn({2, 3}, gen, DType::float64).requires_grad_();
  Tensor b = zeros({2}, DType::float64).requires_grad_();
  softplus(linear(in, w, b)).mean().backward();
  CHECK(w.grad().defined());
  CHECK(b.grad().defined());
}

TEST_CASE("docs/tutorial.md: 6. gradcheck of softplus", "[docs]") {
  std::string printed;
  printed = capture_cout([&] {
#include "../../docs/snippets/tutorial_gradcheck.inc"
    CHECK(alone.ok);
    CHECK(inside.ok);
    const std::vector<double> e = edges.to_vector();
    CHECK(e[0] == 0);
    CHECK(e[1] == Approx(std::log(2.0)));
    CHECK(e[2] == 800);
  });
  CHECK(printed.rfind("gradcheck passed: max |analytic - numerical| = ", 0) == 0);
}

TEST_CASE("docs/tutorial.md: 6. gradcheck catches a backward that forgets dout", "[docs]") {
  // The page says the classic bug (returning dout/dx instead of dL/dout · dout/dx) is caught.
  auto forgets_dout = [](const TensorList& in) {
    Tensor out = softplus(in[0].detach());
    if (should_record({in[0]}))
      record(out, "softplus_wrong", {in[0]}, [x = in[0].detach()](const Tensor&) -> TensorList {
        return {sigmoid(x)};
      });
    return out;
  };
  Generator gen(0);
  GradcheckResult r = gradcheck(forgets_dout, {randn({2, 3}, gen, DType::float64).requires_grad_()});
  CHECK_FALSE(r.ok);
  CHECK(r.report.find("gradcheck failed") != std::string::npos);
}

// ---------------------------------------------------------------- docs/residuals.md

TEST_CASE("docs/residuals.md: the blocks are the snippet files", "[docs][nn]") {
  const auto blocks = cpp_blocks(read_text(kDocsDir + "/residuals.md"));
  const std::vector<std::string> files = {"residuals_placements", "residuals_block", "residuals_rezero", "residuals_recent",
                                          "residuals_stack", "residuals_ngpt",
                                          "residuals_hyper_connections", "residuals_attnres",
                                          "residuals_depth_mup"};
  REQUIRE(blocks.size() == files.size());
  for (std::size_t i = 0; i < files.size(); ++i) {
    INFO("block " << i << " of docs/residuals.md vs docs/snippets/" << files[i] << ".inc");
    CHECK(blocks[i] == read_text(kDocsDir + "/snippets/" + files[i] + ".inc"));
  }
}

TEST_CASE("docs/residuals.md: each placement builds what the comments say", "[docs][nn]") {
#include "../../docs/snippets/residuals_placements.inc"
  auto block0 = [](const std::shared_ptr<nn::TransformerLM>& m) {
    return m->blocks->at<nn::TransformerBlock>(0);
  };
  // One final norm, and only for pre.
  CHECK(pre->final_norm != nullptr);
  for (const auto& m : {post, b2t, deepnorm, rezero, none}) CHECK(m->final_norm == nullptr);
  CHECK(block0(pre)->placement().name == "pre");
  CHECK(block0(post)->placement().name == "post");
  CHECK(block0(post)->attn_residual->alpha == 1.0);
  CHECK(block0(b2t)->placement().name == "b2t");
  CHECK(block0(b2t)->ffn_residual->norm != nullptr);
  CHECK(block0(none)->placement().name == "none");
  // DeepNorm: α = (2L)^(1/4) for a decoder-only stack of L = 4 blocks; β = (8L)^(-1/4).
  CHECK(block0(deepnorm)->attn_residual->alpha == Approx(std::pow(8.0, 0.25)));
  CHECK(nn::deepnorm_decoder_only(4).beta == Approx(std::pow(32.0, -0.25)));
  // ReZero: a gate a = 0 per sublayer and no norm.
  CHECK(block0(rezero)->attn_residual->scale.item() == 0);
  CHECK(block0(rezero)->ffn_residual->scale.item() == 0);
  CHECK(block0(rezero)->attn_residual->norm == nullptr);

  // B2T's weights are the post model's (same seed, same draws); with b2t_scaling, scaled by L^(-1/2).
  manual_seed(7);
  config.block.placement = nn::Placement::post;
  auto post_again = std::make_shared<nn::TransformerLM>(config);
  manual_seed(7);
  config.block.placement = nn::Placement::b2t;
  auto b2t_again = std::make_shared<nn::TransformerLM>(config);
  manual_seed(7);
  config.b2t_scaling = true;
  auto b2t_scaled = std::make_shared<nn::TransformerLM>(config);
  config.b2t_scaling.reset();
  const std::vector<double> w_post = block0(post_again)->ffn->fc1->weight.to_vector();
  const std::vector<double> w_b2t = block0(b2t_again)->ffn->fc1->weight.to_vector();
  const std::vector<double> w_scaled = block0(b2t_scaled)->ffn->fc1->weight.to_vector();
  REQUIRE(w_post.size() == w_b2t.size());
  for (std::size_t i = 0; i < w_post.size(); i += 97) {
    CHECK(w_b2t[i] == w_post[i]);
    CHECK(w_scaled[i] == Approx(w_post[i] * 0.5).margin(1e-7));
  }

  // Every model runs.
  Tensor tokens = tensor({1, 2, 3, 4, 5, 6}, {2, 3}, DType::int64);
  for (const auto& m : {pre, post, b2t, deepnorm, rezero, none}) CHECK(m->forward(tokens).shape() == Shape{2, 3, 32});
}

TEST_CASE("docs/residuals.md: a block with RMSNorm and a residual scale", "[docs][nn]") {
#include "../../docs/snippets/residuals_block.inc"
  CHECK(y.shape() == Shape{2, 5, 16});
  CHECK(layer->attn_residual->alpha == Approx(1 / std::sqrt(2.0)));
  CHECK(dynamic_cast<nn::RMSNorm*>(layer->attn_residual->norm.get()) != nullptr);
}

TEST_CASE("docs/residuals.md: ReZero starts as the identity", "[docs][nn]") {
#include "../../docs/snippets/residuals_rezero.inc"
  CHECK(y.to_vector() == x.to_vector());
  for (double g : x.grad().to_vector()) CHECK(g == 1.0);
  REQUIRE(block->attn_residual->scale.grad().defined());
  REQUIRE(block->ffn_residual->scale.grad().defined());
  CHECK(block->attn_residual->scale.grad().item() != 0);
  CHECK(block->ffn_residual->scale.grad().item() != 0);
  // The sublayers behind a = 0 get no gradient yet.
  for (double g : block->ffn->fc1->weight.grad().to_vector()) CHECK(g == 0);
}

TEST_CASE("docs/residuals.md: the newer placements build what the comments say", "[docs][nn]") {
#include "../../docs/snippets/residuals_recent.inc"
  auto block = [](const std::shared_ptr<nn::TransformerLM>& m, std::int64_t i) { return m->blocks->at<nn::TransformerBlock>(i); };
  // One final norm each, an RMSNorm.
  for (const auto& m : {peri, olmo2, mixln, lns, gpas}) {
    REQUIRE(m->final_norm != nullptr);
    CHECK(m->final_norm->type_name() == "RMSNorm");
  }
  // GPAS: one gate per block, blocks.l.gate, 0 at init
  for (std::int64_t i = 0; i < 8; ++i) {
    REQUIRE(block(gpas, i)->gate.defined());
    CHECK(block(gpas, i)->gate.item() == 0.0);
    CHECK(!block(lns, i)->gate.defined());
  }
  CHECK(io::state_dict(*gpas).contains("blocks.7.gate"));
  // Peri-LN: an output norm in every sublayer; the others have none.
  for (std::int64_t i = 0; i < 8; ++i) {
    CHECK(block(peri, i)->attn_residual->norm_out != nullptr);
    CHECK(block(peri, i)->ffn_residual->norm_out != nullptr);
    CHECK(block(olmo2, i)->attn_residual->norm_out == nullptr);
  }
  // Mix-LN: blocks 1 and 2 are Post-LN, N2(h + FFN(h)) with h = N1(x + Attn(x)); block 3 is Pre-LN.
  Tensor x = randn({2, 3, 16});
  auto post_ln = [&](nn::TransformerBlock& b) {
    const Tensor h = b.attn_residual->norm->forward(add(x, b.attn->forward(x)));
    return b.ffn_residual->norm->forward(add(h, b.ffn->forward(h)));
  };
  auto pre_ln = [&](nn::TransformerBlock& b) {
    const Tensor h = add(x, b.attn->forward(b.attn_residual->norm->forward(x)));
    return add(h, b.ffn->forward(b.ffn_residual->norm->forward(h)));
  };
  auto diff = [](const Tensor& a, const Tensor& b) { return max(abs(sub(a, b))).item(); };
  CHECK(diff(block(mixln, 0)->forward(x), post_ln(*block(mixln, 0))) < 1e-6);
  CHECK(diff(block(mixln, 1)->forward(x), post_ln(*block(mixln, 1))) < 1e-6);
  CHECK(diff(block(mixln, 2)->forward(x), pre_ln(*block(mixln, 2))) < 1e-6);
  CHECK(diff(block(mixln, 2)->forward(x), post_ln(*block(mixln, 2))) > 1e-3);
  // LayerNorm Scaling, xavier init: the residual projections are not drawn smaller in deep stacks.
  CHECK(lns->config.init == nn::InitScheme::xavier);
  CHECK(block(lns, 7)->stack.index == 7);
  Tensor tokens = tensor({1, 2, 3, 4, 5, 6}, {2, 3}, DType::int64);
  for (const auto& m : {peri, olmo2, mixln, lns}) CHECK(m->forward(tokens).shape() == Shape{2, 3, 32});
}

TEST_CASE("docs/residuals.md: a block's place in its stack", "[docs][nn]") {
#include "../../docs/snippets/residuals_stack.inc"
  CHECK(y.shape() == Shape{2, 5, 16});
  CHECK(third->stack.index == 2);
  // block 3's norms' outputs are divided by √3
  auto& b = *third;
  const Tensor h = add(x, b.attn->forward(div(b.attn_residual->norm->forward(x), std::sqrt(3.0))));
  const Tensor expected = add(h, b.ffn->forward(div(b.ffn_residual->norm->forward(h), std::sqrt(3.0))));
  CHECK(max(abs(sub(y, expected))).item() < 1e-6);
  // Mix-LN's ⌊0.5·6⌋ = 3 encoder and ⌊0.5·4⌋ = 2 decoder blocks are Post-LN: their residual sums are
  // normalized, so each output row has mean 0 and variance 1 (unit gains at init)
  auto row_mean_is_zero = [&](nn::TransformerBlock& blk, bool decoder) {
    nn::BlockContext ctx;
    if (decoder) ctx.memory = randn({2, 4, 16});
    return max(abs(mean(blk.forward(x, ctx), {-1}))).item() < 1e-5;
  };
  for (std::int64_t i = 0; i < 6; ++i) CHECK(row_mean_is_zero(*model->encoder->at<nn::TransformerBlock>(i), false) == (i < 3));
  for (std::int64_t i = 0; i < 4; ++i) CHECK(row_mean_is_zero(*model->decoder->at<nn::TransformerBlock>(i), true) == (i < 2));
  REQUIRE(model->encoder_norm != nullptr);
  REQUIRE(model->decoder_norm != nullptr);
}

TEST_CASE("docs/residuals.md: an nGPT model and its renormalization", "[docs][nn][ngpt]") {
#include "../../docs/snippets/residuals_ngpt.inc"
  CHECK_FALSE(model->final_norm);
  CHECK(model->s_z.defined());
  const auto block = model->blocks->at<nn::TransformerBlock>(0);
  CHECK(block->attn_residual->eigen_lr.defined());
  CHECK(block->attn->s_qk.defined());
  CHECK(block->ffn->s_v.defined());
  Tensor tokens = tensor({1, 2, 3, 4, 5, 6}, {2, 3}, DType::int64);
  opt.zero_grad();
  cross_entropy(model->forward(tokens).reshape({6, 32}), tokens.reshape({6})).backward();
  opt.step();
  // the embedding's rows and fc2's columns are unit vectors after the step
  for (double n : sqrt(sum(mul(model->tok_emb->weight, model->tok_emb->weight), {1})).to_vector()) CHECK(n == Approx(1.0));
  const Tensor fc2 = block->ffn->fc2->weight;
  for (double n : sqrt(sum(mul(fc2, fc2), {0})).to_vector()) CHECK(n == Approx(1.0));
}

TEST_CASE("docs/residuals.md: an mHC model of four copies, and its stream's norm after every block", "[docs][nn][hc]") {
#include "../../docs/snippets/residuals_hyper_connections.inc"
  const Tensor tokens = tensor({1, 2, 3, 4, 5, 6}, {2, 3}, DType::int64);
  (void)lm.forward(tokens);
  REQUIRE(stream_norm.size() == 7);  // the embedding's 4 copies, then after each of the 6 blocks
  for (double n : stream_norm) CHECK(std::isfinite(n));
  CHECK(lm.stream->named_parameters().size() == 12 * 8);  // 8 per sublayer
  watch.remove();
}

TEST_CASE("docs/residuals.md: Attention Residuals in blocks of four sublayers", "[docs][nn][attnres]") {
#include "../../docs/snippets/residuals_attnres.inc"
  const auto state = io::state_dict(*model);
  CHECK(state.contains("stream.depth.16.query"));
  CHECK(!state.contains("stream.depth.17.query"));
  CHECK(model->forward(tensor({1, 2, 3, 4, 5, 6}, {2, 3}, DType::int64)).shape() == Shape{2, 3, 32});
}

TEST_CASE("docs/residuals.md: the depth parametrization's m and AdamW groups", "[docs][nn][depth_mup]") {
#include "../../docs/snippets/residuals_depth_mup.inc"
  for (std::int64_t i = 0; i < 16; ++i) {
    const auto block = model->blocks->at<nn::TransformerBlock>(i);
    CHECK(block->attn_residual->branch == 0.25);
    CHECK(block->ffn_residual->branch == 0.25);
  }
  // block 1 is x + ¼·Attn(N1(x)), then h + ¼·FFN(N2(h))
  auto& b = *model->blocks->at<nn::TransformerBlock>(0);
  Tensor x = randn({2, 3, 16});
  const Tensor h = add(x, mul(b.attn->forward(b.attn_residual->norm->forward(x)), 0.25));
  const Tensor expected = add(h, mul(b.ffn->forward(b.ffn_residual->norm->forward(h)), 0.25));
  CHECK(max(abs(sub(b.forward(x), expected))).item() < 1e-6);
  REQUIRE(opt.num_groups() >= 3);
  for (std::size_t g = 0; g < opt.num_groups(); ++g) {
    const optim::HyperParameters hp = opt.hyper_parameters(g);
    CHECK(opt.lr(g) == Approx(3e-3).epsilon(1e-15));  // r^(α−1) = 1
    CHECK(optim::hyper_parameter(hp, "eps", "test") == Approx(1e-8 / 4).epsilon(1e-15));
  }
}
