// test_pytorch_idioms.cpp — what a PyTorch user writes first compiles and does what they
// expect: Sequential from modules given one by one (make_shared cannot forward a braced list)
// or from a vector, PyTorch's activation names, an optimizer built on model->parameters(), and
// a module's printout ending its line.
#include <catch2/catch.hpp>

#include <sstream>

#include <tapegrad/tapegrad.hpp>

using namespace tapegrad;

namespace {

std::shared_ptr<nn::Sequential> mlp() {
  manual_seed(5);
  return std::make_shared<nn::Sequential>(std::make_shared<nn::Linear>(2, 8), std::make_shared<nn::ReLU>(),
                                          std::make_shared<nn::Linear>(8, 3));
}

}  // namespace

TEST_CASE("Sequential from modules one by one, or from a vector, names its children 0, 1, 2", "[nn][idioms]") {
  const auto model = mlp();
  CHECK(model->size() == 3);
  const auto params = model->named_parameters();
  REQUIRE(params.size() == 4);
  CHECK(params[0].first == "0.weight");
  CHECK(params[3].first == "2.bias");
  const std::vector<std::shared_ptr<nn::UnaryModule>> parts{std::make_shared<nn::Linear>(2, 4), std::make_shared<nn::GELU>(),
                                                            std::make_shared<nn::Tanh>(), std::make_shared<nn::SiLU>()};
  nn::Sequential from_vector(parts);
  CHECK(from_vector.size() == 4);
  CHECK(from_vector(ones({5, 2})).shape() == Shape{5, 4});
  std::ostringstream os;
  os << from_vector;
  CHECK(os.str() == "Sequential(\n"
                    "  (0): Linear(in_features=2, out_features=4, bias=true)  weight [4, 2]  bias [4]\n"
                    "  (1): GELU()\n"
                    "  (2): Tanh()\n"
                    "  (3): SiLU()\n"
                    ")\n");
}

TEST_CASE("the named activations compute their functions", "[nn][idioms]") {
  const Tensor x = tensor({-1, 0.5, 2}, {3});
  CHECK(nn::ReLU()(x).to_vector() == relu(x).to_vector());
  CHECK(nn::GELU()(x).to_vector() == gelu(x).to_vector());
  CHECK(nn::SiLU()(x).to_vector() == silu(x).to_vector());
  CHECK(nn::Tanh()(x).to_vector() == tanh(x).to_vector());
}

TEST_CASE("an optimizer on model->parameters() steps as on named_parameters(), its state numbered", "[optim][idioms]") {
  const auto a = mlp(), b = mlp();
  optim::AdamW by_list(a->parameters(), optim::AdamOptions(1e-2).weight_decay(0.1));
  optim::AdamW by_name(b->named_parameters(), optim::AdamOptions(1e-2).weight_decay(0.1));
  optim::SGD sgd(a->parameters(), optim::SGDOptions(0.1));  // compiles for every optimizer
  optim::Adam adam(a->parameters(), optim::AdamOptions());
  const Tensor x = tensor({0.5, -1, 2, 0.25}, {2, 2});
  for (int step = 0; step < 3; ++step) {
    for (auto [model, opt] : {std::pair{a, static_cast<optim::Optimizer*>(&by_list)}, std::pair{b, static_cast<optim::Optimizer*>(&by_name)}}) {
      opt->zero_grad();
      sum(mul((*model)(x), (*model)(x))).backward();
      opt->step();
    }
  }
  const auto pa = a->parameters(), pb = b->parameters();
  for (std::size_t i = 0; i < pa.size(); ++i) CHECK(pa[i].to_vector() == pb[i].to_vector());
  const optim::OptimizerState state = by_list.state_dict();
  CHECK(state.groups.at(0).params == std::vector<std::string>{"0", "1", "2", "3"});  // as torch.optim numbers them
}

TEST_CASE("a shape mismatch inside Sequential names the layer and what it was given", "[nn][idioms][errors]") {
  const auto model = mlp();  // Linear(2, 8), ReLU, Linear(8, 3)
  CHECK_THROWS_AS((*model)(ones({4, 3})), ShapeError);
  CHECK_THROWS_WITH((*model)(ones({4, 3})),
                    Catch::Contains("Sequential: layer (0) Linear(in_features=2, out_features=8, bias=true) given [4, 3]: linear:"));
}
