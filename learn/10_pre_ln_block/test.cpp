// The properties exercise 10 is graded on (tag [learn.10]), easy to hard: the block keeps its
// input's shape; with the sublayers' output projections zeroed it is exactly the identity (the
// residual path); it equals tapegrad's own TransformerBlock with placement "pre" given the same
// parameters; its gradient, over x and a few parameters, matches central differences in
// float64; it equals a Pre-LN block of PyTorch's modules, output and gradient (reference.inc,
// made by make_reference.py); and, optionally, B2T from the same pieces equals TransformerBlock
// with placement "b2t".
#include <string>
#include <utility>
#include <vector>

#include "10_pre_ln_block/exercise.hpp"
#include "grading/grading.hpp"

using namespace tapegrad;
using learn::PreLNBlock;
using learn::grading::tensors_close;

namespace {

#include "reference.inc"

std::shared_ptr<nn::TransformerBlock> library_block(const std::string& placement, std::int64_t d_model,
                                                   std::int64_t n_heads) {
  nn::TransformerBlockConfig config;
  config.d_model = d_model;
  config.n_heads = n_heads;
  config.placement = placement;
  config.dtype = DType::float64;
  return std::make_shared<nn::TransformerBlock>(config);
}

// The library block's parameters under the exercise's names: its sublayers' norms are
// attn_residual.norm and ffn_residual.norm, here ln1 and ln2; attn and ffn are named alike.
io::StateDict renamed(const io::StateDict& library) {
  io::StateDict out;
  for (const auto& [name, t] : library) {
    std::string n = name;
    for (const auto& [from, to] : {std::pair<std::string, std::string>{"attn_residual.norm.", "ln1."},
                                   {"ffn_residual.norm.", "ln2."}})
      if (n.rfind(from, 0) == 0) n = to + n.substr(from.size());
    out.insert(n, t);
  }
  return out;
}

// A float64 block of the exercise and the library's of `placement`, with the same parameters
// (the library's init, moved away from LayerNorm's γ = 1, β = 0 so that a swapped or missing
// norm shows).
struct Pair {
  std::shared_ptr<PreLNBlock> mine;
  std::shared_ptr<nn::TransformerBlock> library;
};
Pair same_parameters(const std::string& placement, std::int64_t d_model, std::int64_t n_heads, Generator& gen) {
  Pair p{std::make_shared<PreLNBlock>(d_model, n_heads, DType::float64), library_block(placement, d_model, n_heads)};
  for (auto& norm : {p.library->attn_residual->norm, p.library->ffn_residual->norm})
    for (const auto& [name, t] : norm->named_parameters()) {
      Tensor value = t;
      value.copy_(t.detach() + 0.3 * randn(t.shape(), gen, DType::float64));
    }
  io::load_state_dict(*p.mine, renamed(io::state_dict(*p.library)));
  return p;
}

}  // namespace

TEST_CASE("the block keeps its input's shape: (B, T, d_model) in, the same out", "[learn.10]") {
  const Shape shape = GENERATE(Shape{1, 1, 8}, Shape{2, 5, 8});
  Generator gen(1);
  PreLNBlock block(8, 2, DType::float64);
  const Tensor y = block(randn(shape, gen, DType::float64));
  LEARN_CHECK(y.defined() && y.shape() == shape
                  ? ""
                  : "for x of shape " + shape_str(shape) + ", y has shape " +
                        (y.defined() ? shape_str(y.shape()) : std::string("(undefined)")) + ": it should be x's");
}

TEST_CASE("the residual path: with the sublayers' output projections zeroed, y == x exactly", "[learn.10]") {
  const Shape shape = GENERATE(Shape{1, 3, 8}, Shape{2, 4, 16});
  Generator gen(2);
  PreLNBlock block(shape[2], 4, DType::float64);
  for (const auto& out : {block.attn->out_proj, block.ffn->fc2}) {
    out->weight.fill_(0.0);
    out->bias.fill_(0.0);
  }
  const Tensor x = randn(shape, gen, DType::float64);
  const std::string differs = tensors_close("y", block(x), x, "x", 0, 0);
  LEARN_CHECK(differs.empty()
                  ? ""
                  : differs + ". Attn and FFN now output exact zeros, so a Pre-LN block is x + 0 + 0 = x: the stream is "
                              "only added to, never normalized. A norm on the stream (LN(x + Attn(...)), Post-LN's "
                              "place) or a missing + x breaks that");
}

TEST_CASE("it equals tapegrad's TransformerBlock with placement \"pre\", given the same parameters", "[learn.10]") {
  const auto [d_model, n_heads] = GENERATE(values<std::pair<std::int64_t, std::int64_t>>({{8, 2}, {12, 3}, {16, 1}}));
  const std::int64_t T = GENERATE(take(2, random(1, 7)));
  Generator gen(d_model * 100 + T);
  const Pair p = same_parameters("pre", d_model, n_heads, gen);
  const Tensor x = randn({2, T, d_model}, gen, DType::float64);
  const std::string differs =
      tensors_close("y", (*p.mine)(x), p.library->forward(x), "TransformerBlock \"pre\"", 1e-10, 1e-12);
  if (differs.empty()) return;
  Pair post = same_parameters("post", d_model, n_heads, gen);
  io::load_state_dict(*post.library, io::state_dict(*p.library));
  const bool is_post = tensors_close("", (*p.mine)(x), post.library->forward(x), "", 1e-10, 1e-12).empty();
  LEARN_CHECK(differs + (is_post ? ". Your block is Post-LN's, h = LN1(x + Attn(x)), y = LN2(h + FFN(h)): in Pre-LN "
                                   "the norm comes before each sublayer, h = x + Attn(LN1(x))"
                                 : ". Pre-LN: h = x + Attn(LN1(x)), y = h + FFN(LN2(h)): check what each norm takes (LN1 x, LN2 h) and that "
                                   "each sublayer's output is added to the stream"));
}

TEST_CASE("the gradient through the whole block matches the numerical derivative (float64): x, ln1's γ, the "
          "attention's qkv weight, the FFN's first bias",
          "[learn.10]") {
  const std::int64_t T = GENERATE(1, 3);
  Generator gen(30 + T);
  const Pair p = same_parameters("pre", 8, 2, gen);
  const Tensor x = learn::grading::leaf({2, T, 8}, gen);
  LEARN_CHECK(learn::grading::gradient_matches_numerical(
      [&](const TensorList& inputs) { return (*p.mine)(inputs[0]); },
      {x, p.mine->ln1->weight, p.mine->attn->qkv->weight, p.mine->ffn->fc1->bias},
      {"x", "ln1.weight", "attn.qkv.weight", "ffn.fc1.bias"}));
}

TEST_CASE("it equals a Pre-LN block of PyTorch's modules: y and dL/dx of L = Σ y² (reference values)", "[learn.10]") {
  using namespace reference;
  PreLNBlock block(d_model, n_heads, DType::float64);
  const io::StateDict mine = io::state_dict(block);
  io::StateDict torch_parameters;
  for (const auto& [name, values] : parameters) torch_parameters.insert(name, tensor(values, mine.at(name).shape(), DType::float64));
  io::load_state_dict(block, torch_parameters);
  const Tensor tx = tensor(x, {batch, tokens, d_model}, DType::float64).requires_grad_();
  const Tensor ty = block(tx);
  LEARN_REQUIRE(tensors_close("y", ty, tensor(y, {batch, tokens, d_model}, DType::float64),
                              "PyTorch's Pre-LN block (LayerNorm, MultiheadAttention, Linear, GELU)", 1e-10, 1e-12));
  sum(ty * ty).backward();
  LEARN_CHECK(tensors_close("dL/dx", tx.grad(), tensor(dL_dx, {batch, tokens, d_model}, DType::float64),
                            "PyTorch's backward through its Pre-LN block", 1e-10, 1e-12));
}

TEST_CASE("optional, B2T: the same pieces placed as h = LN1(x + Attn(x)), y = LN2(h + FFN(h) + x) equal "
          "TransformerBlock \"b2t\"",
          "[learn.10]") {
  const auto [d_model, n_heads] = GENERATE(values<std::pair<std::int64_t, std::int64_t>>({{8, 2}, {12, 3}}));
  Generator gen(40 + d_model);
  const Pair p = same_parameters("b2t", d_model, n_heads, gen);
  const Tensor x = randn({2, 4, d_model}, gen, DType::float64);
  LEARN_CHECK(tensors_close("y of b2t_forward", p.mine->b2t_forward(x), p.library->forward(x), "TransformerBlock \"b2t\"",
                            1e-10, 1e-12));
}
