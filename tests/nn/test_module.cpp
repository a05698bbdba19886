// test_module.cpp — Module: registration of parameters, buffers and children, dotted names in
// registration order, named_modules, train/eval, zero_grad, num_parameters, printing, the
// registration errors; Sequential and ModuleList.
#include <sstream>
#include <string>
#include <vector>

#include <catch2/catch.hpp>
#include <tapegrad/tapegrad.hpp>

using namespace tapegrad;
using Catch::Contains;

namespace {

// A module that exposes the protected registration calls, to build trees by hand.
struct Probe : nn::Module {
  Probe() : Module("Probe") {}
  using Module::register_buffer;
  using Module::register_module;
  using Module::register_parameter;
};

std::vector<std::string> names_of(const nn::NamedTensors& named) {
  std::vector<std::string> out;
  for (const auto& [name, _] : named) out.push_back(name);
  return out;
}

nn::TransformerLMConfig small_lm_config(std::int64_t n_layers) {
  nn::TransformerLMConfig c;
  c.vocab_size = 11;
  c.max_seq_len = 8;
  c.n_layers = n_layers;
  c.block.d_model = 8;
  c.block.n_heads = 2;
  c.block.d_ff = 16;
  return c;
}

}  // namespace

TEST_CASE("Module registers parameters, buffers and children under dotted names in order", "[module]") {
  auto root = std::make_shared<Probe>();
  const Tensor w = root->register_parameter("w", zeros({2, 3}));
  const Tensor frozen = root->register_parameter("frozen", ones({3}), false);
  const Tensor running = root->register_buffer("running", zeros({4}));
  auto child = root->register_module("child", std::make_shared<Probe>());
  child->register_parameter("a", zeros({5}));
  child->register_buffer("count", zeros({1}));
  auto grandchild = child->register_module("inner", std::make_shared<Probe>());
  grandchild->register_parameter("b", zeros({2}));
  child->register_parameter("c", zeros({1}));  // registered after inner: still listed before it

  CHECK(w.requires_grad());
  CHECK_FALSE(frozen.requires_grad());
  CHECK_FALSE(running.requires_grad());
  // the handle returned is the registered tensor itself
  CHECK(root->named_parameters()[0].second.is_same(w));

  CHECK(names_of(root->named_parameters()) ==
        std::vector<std::string>{"w", "frozen", "child.a", "child.c", "child.inner.b"});
  CHECK(names_of(root->named_parameters(false)) == std::vector<std::string>{"w", "frozen"});
  CHECK(names_of(root->named_buffers()) == std::vector<std::string>{"running", "child.count"});
  CHECK(names_of(root->named_buffers(false)) == std::vector<std::string>{"running"});
  CHECK(root->parameters().size() == 5);
  CHECK(root->parameters(false).size() == 2);
  CHECK(root->num_parameters() == 6 + 3 + 5 + 1 + 2);  // buffers are not parameters

  const auto modules = root->named_modules();
  REQUIRE(modules.size() == 3);
  CHECK(modules[0].first.empty());
  CHECK(modules[0].second.get() == root.get());
  CHECK(modules[1].first == "child");
  CHECK(modules[2].first == "child.inner");
  CHECK(modules[2].second.get() == grandchild.get());
  REQUIRE(root->named_children().size() == 1);
  CHECK(root->named_children()[0].first == "child");
}

TEST_CASE("Module names of a TransformerLM follow the PyTorch dotted scheme", "[module]") {
  auto lm = std::make_shared<nn::TransformerLM>(small_lm_config(2));
  const auto names = names_of(lm->named_parameters());
  REQUIRE(names.size() == lm->parameters().size());
  auto index_of = [&](const std::string& n) {
    for (std::size_t i = 0; i < names.size(); ++i)
      if (names[i] == n) return static_cast<std::int64_t>(i);
    return std::int64_t{-1};
  };
  CHECK(names.front() == "tok_emb.weight");
  CHECK(index_of("blocks.1.attn.qkv.weight") >= 0);
  CHECK(index_of("blocks.0.attn.qkv.weight") < index_of("blocks.1.attn.qkv.weight"));
  CHECK(index_of("blocks.1.attn.qkv.weight") < index_of("blocks.1.attn.qkv.bias"));
  CHECK(index_of("blocks.1.ffn.fc2.weight") < index_of("final_norm.weight"));
  CHECK(names.back() == "final_norm.bias");

  // named_modules: depth first, the root first under the empty name
  const auto modules = lm->named_modules();
  std::vector<std::string> module_names;
  for (const auto& [n, m] : modules) module_names.push_back(n);
  REQUIRE(module_names.size() >= 7);
  CHECK(module_names[0].empty());
  CHECK(module_names[1] == "tok_emb");
  CHECK(module_names[2] == "pos_emb");
  CHECK(module_names[3] == "blocks");
  CHECK(module_names[4] == "blocks.0");
  CHECK(module_names[5] == "blocks.0.attn");
  CHECK(module_names[6] == "blocks.0.attn.qkv");
  CHECK(module_names.back() == "final_norm");
  // the parameters reachable through the listed modules are exactly named_parameters()
  std::int64_t own = 0;
  for (const auto& [n, m] : modules) own += static_cast<std::int64_t>(m->named_parameters(false).size());
  CHECK(own == static_cast<std::int64_t>(names.size()));
}

TEST_CASE("Module named_modules works on a module not owned by a shared_ptr", "[module]") {
  nn::Sequential seq{std::make_shared<nn::Linear>(2, 2)};
  const auto modules = seq.named_modules();  // the root is listed through a non-owning handle
  REQUIRE(modules.size() == 2);
  CHECK(modules[0].first.empty());
  CHECK(modules[0].second.get() == &seq);
  CHECK(modules[1].first == "0");
  CHECK(modules[1].second.get() == seq[0].get());
}

TEST_CASE("Module train() and eval() reach every descendant", "[module]") {
  nn::TransformerLMConfig c = small_lm_config(2);
  c.block.dropout = 0.5;
  auto model = std::make_shared<nn::TransformerLM>(c);
  nn::TransformerLM& lm = *model;
  auto all_in_mode = [&](bool training) {
    for (const auto& [n, m] : lm.named_modules())
      if (m->is_training() != training) return false;
    return true;
  };
  CHECK(lm.is_training());
  CHECK(all_in_mode(true));
  lm.eval();
  CHECK_FALSE(lm.is_training());
  CHECK(all_in_mode(false));
  // in eval mode dropout is off: two forwards agree
  const Tensor tokens = tensor({1, 2, 3, 4}, {1, 4}, DType::int64);
  CHECK(lm.forward(tokens).to_vector() == lm.forward(tokens).to_vector());
  lm.train();
  CHECK(all_in_mode(true));
  CHECK(lm.forward(tokens).to_vector() != lm.forward(tokens).to_vector());
  // a child switched alone does not switch its parent
  lm.blocks->eval();
  CHECK(lm.is_training());
  CHECK_FALSE(lm.blocks->at<nn::TransformerBlock>(1)->ffn->is_training());
}

TEST_CASE("Module zero_grad clears every gradient", "[module]") {
  nn::TransformerLM lm(small_lm_config(1));
  const Tensor tokens = tensor({1, 2, 3, 4, 5, 6}, {2, 3}, DType::int64);
  lm.forward(tokens).sum().backward();
  std::int64_t with_grad = 0;
  for (const auto& p : lm.parameters()) with_grad += p.grad().defined();
  CHECK(with_grad == static_cast<std::int64_t>(lm.parameters().size()));
  lm.zero_grad();
  for (const auto& [name, p] : lm.named_parameters()) {
    INFO(name);
    CHECK_FALSE(p.grad().defined());
  }
}

TEST_CASE("Module num_parameters counts elements", "[module]") {
  CHECK(nn::Linear(3, 4).num_parameters() == 3 * 4 + 4);
  CHECK(nn::Linear(nn::LinearOptions(3, 4).bias(false)).num_parameters() == 12);
  CHECK(nn::Embedding(10, 6).num_parameters() == 60);
  CHECK(nn::LayerNorm(5).num_parameters() == 10);
  CHECK(nn::RMSNorm(5).num_parameters() == 5);
  CHECK(nn::LayerNorm(nn::NormOptions(5).elementwise_affine(false)).num_parameters() == 0);
  // attention: qkv (3C, C) + 3C, out_proj (C, C) + C
  CHECK(nn::MultiHeadAttention(nn::MultiHeadAttentionOptions(8, 2)).num_parameters() == 4 * 8 * 8 + 4 * 8);
}

TEST_CASE("Module operator<< prints the tree with settings and shapes", "[module]") {
  {
    std::ostringstream os;
    os << nn::Linear(3, 4);
    CHECK(os.str() == "Linear(in_features=3, out_features=4, bias=true)  weight [4, 3]  bias [4]\n");
  }
  nn::TransformerLM lm(small_lm_config(2));
  std::ostringstream os;
  os << lm;
  const std::string s = os.str();
  INFO(s);
  CHECK(s.rfind("TransformerLM(vocab_size=11, n_layers=2, d_model=8, placement=pre, tied\n", 0) == 0);
  CHECK_THAT(s, Contains("\n  (tok_emb): Embedding(num_embeddings=11, embedding_dim=8)  weight [11, 8]\n"));
  CHECK_THAT(s, Contains("\n  (blocks): ModuleList(\n"
                         "    (0): TransformerBlock(placement=pre, norm=layernorm, causal\n"));
  CHECK_THAT(s, Contains("(qkv): Linear(in_features=8, out_features=24, bias=true)  weight [24, 8]  bias [24]"));
  CHECK_THAT(s, Contains("(fc2): Linear(in_features=16, out_features=8, bias=true)  weight [8, 16]  bias [8]"));
  CHECK_THAT(s, Contains("(1): TransformerBlock("));
  CHECK_THAT(s, Contains("(final_norm): LayerNorm(dim=8, eps=1e-05, elementwise_affine=true)  weight [8]  bias [8]"));
  CHECK(s.substr(s.size() - 2) == ")\n");  // the tree ends its line, as Python's print(model)
  // a module with its own parameters and children lists the parameters first, indented
  Probe root;
  root.register_parameter("scale", zeros({2}));
  root.register_module("lin", std::make_shared<nn::Linear>(2, 1));
  std::ostringstream os2;
  os2 << root;
  CHECK(os2.str() ==
        "Probe(\n  scale [2]\n  (lin): Linear(in_features=2, out_features=1, bias=true)  weight [1, 2]  bias [1]\n)\n");
}

TEST_CASE("Module registration rejects bad names and null modules", "[module]") {
  Probe m;
  m.register_parameter("w", zeros({1}));
  REQUIRE_THROWS_AS(m.register_parameter("w", zeros({1})), ValueError);
  REQUIRE_THROWS_WITH(m.register_parameter("w", zeros({1})), Contains("Probe: the name 'w' is already registered"));
  // one namespace for parameters, buffers and children
  REQUIRE_THROWS_WITH(m.register_buffer("w", zeros({1})), Contains("the name 'w' is already registered"));
  REQUIRE_THROWS_WITH(m.register_module("w", std::make_shared<Probe>()), Contains("already registered"));
  REQUIRE_THROWS_WITH(m.register_parameter("a.b", zeros({1})),
                      Contains("Probe: invalid name 'a.b' (must be non-empty, without '.')"));
  REQUIRE_THROWS_WITH(m.register_module("x.y", std::make_shared<Probe>()), Contains("invalid name 'x.y'"));
  REQUIRE_THROWS_WITH(m.register_buffer("", zeros({1})), Contains("invalid name ''"));
  REQUIRE_THROWS_AS(m.register_module("child", std::shared_ptr<Probe>()), ValueError);
  REQUIRE_THROWS_WITH(m.register_module("child", std::shared_ptr<Probe>()), Contains("Probe: module 'child' is null"));
  REQUIRE_THROWS_WITH(m.register_parameter("u", Tensor()), Contains("Probe: parameter 'u' is undefined"));
  // failed registrations leave nothing behind
  CHECK(names_of(m.named_parameters()) == std::vector<std::string>{"w"});
  CHECK(m.named_children().empty());
}

TEST_CASE("Sequential names its children 0, 1, ... and chains them", "[module][sequential]") {
  manual_seed(3);
  auto l0 = std::make_shared<nn::Linear>(nn::LinearOptions(3, 4).dtype(DType::float64));
  auto act = std::make_shared<nn::Act>(nn::Activation::tanh);
  auto l2 = std::make_shared<nn::Linear>(nn::LinearOptions(4, 2).dtype(DType::float64));
  nn::Sequential seq{l0, act, l2};
  CHECK(seq.size() == 3);
  CHECK(seq[1].get() == act.get());
  CHECK(names_of(seq.named_parameters()) == std::vector<std::string>{"0.weight", "0.bias", "2.weight", "2.bias"});
  CHECK(seq.named_modules()[2].first == "1");

  Generator gen(5);
  const Tensor x = randn({2, 3}, gen, DType::float64);
  const Tensor expected = l2->forward(tanh(l0->forward(x)));
  CHECK(seq.forward(x).to_vector() == expected.to_vector());
  CHECK(seq(x).to_vector() == expected.to_vector());

  // push_back continues the numbering; an empty Sequential is the identity
  seq.push_back(std::make_shared<nn::Act>(nn::Activation::relu));
  CHECK(seq.named_children().back().first == "3");
  CHECK(seq.forward(x).to_vector() == relu(expected).to_vector());
  nn::Sequential empty;
  CHECK(empty.forward(x).to_vector() == x.to_vector());
  CHECK_THROWS_AS(seq[4], std::out_of_range);
}

TEST_CASE("ModuleList holds any modules and casts them back", "[module][module_list]") {
  nn::ModuleList list;
  list.push_back(std::make_shared<nn::Linear>(2, 3));
  list.push_back(std::make_shared<nn::LayerNorm>(3));
  list.push_back(std::make_shared<nn::MultiHeadAttention>(nn::MultiHeadAttentionOptions(4, 2)));
  CHECK(list.size() == 3);
  CHECK(names_of(list.named_parameters()) ==
        std::vector<std::string>{"0.weight", "0.bias", "1.weight", "1.bias", "2.qkv.weight", "2.qkv.bias",
                                 "2.out_proj.weight", "2.out_proj.bias"});
  auto lin = list.at<nn::Linear>(0);
  REQUIRE(lin);
  CHECK(lin->options.out_features() == 3);
  CHECK(list.at<nn::UnaryModule>(1).get() == list[1].get());  // a base class also works
  CHECK(list.at<nn::MultiHeadAttention>(2)->options.n_heads() == 2);
  REQUIRE_THROWS_AS(list.at<nn::LayerNorm>(0), ValueError);
  REQUIRE_THROWS_WITH(list.at<nn::LayerNorm>(0), Contains("ModuleList: module 0 is a Linear"));
  REQUIRE_THROWS_WITH(list.at<nn::Linear>(2), Contains("ModuleList: module 2 is a MultiHeadAttention"));
  CHECK_THROWS_AS(list.at<nn::Linear>(3), std::out_of_range);
  std::int64_t visited = 0;
  for (const auto& m : list) visited += m != nullptr;
  CHECK(visited == 3);
}
