// test_optimizer.cpp — what the optimizers promise besides PyTorch's numbers (those are in
// test_optim_vs_torch.cpp): a tiny model converges, the state round-trips exactly, bad
// settings and bad states are refused with clear messages, the weight-decay groups split a
// model as documented, and k accumulated micro-batches equal one batch k times larger.
#include <cmath>

#include <catch2/catch.hpp>
#include <tapegrad/optim/optim.hpp>
#include <tapegrad/tapegrad.hpp>

using namespace tapegrad;
using namespace tapegrad::optim;
using Catch::Contains;

namespace {

// y = x·[1, -2, 0.5]ᵀ + 0.3 on 16 fixed points, float64.
struct Regression {
  Tensor x, y;
  Regression() {
    Generator gen(7);
    x = randn({16, 3}, gen, DType::float64);
    y = add(matmul(x, tensor({1, -2, 0.5}, {3, 1}, DType::float64)), 0.3);
  }
};

std::shared_ptr<nn::Linear> make_linear(std::uint64_t seed = 1) {
  manual_seed(seed);
  return std::make_shared<nn::Linear>(nn::LinearOptions(3, 1).dtype(DType::float64));
}

// One training step on rows [begin, end) of the regression, loss scaled by `scale`.
void backward_on(nn::Linear& model, const Regression& data, std::int64_t begin, std::int64_t end, double scale = 1) {
  const Tensor x = narrow(data.x, 0, begin, end - begin), y = narrow(data.y, 0, begin, end - begin);
  mul(mse_loss(model.forward(x), y), scale).backward();
}

double loss_of(nn::Linear& model, const Regression& data) {
  NoGradGuard no_grad;
  return mse_loss(model.forward(data.x), data.y).item();
}

// Copies of the parameter values (not aliases).
std::vector<std::vector<double>> values_of(const NamedTensors& params) {
  std::vector<std::vector<double>> out;
  for (const auto& [_, p] : params) out.push_back(p.to_vector());
  return out;
}

}  // namespace

TEST_CASE("each optimizer fits a linear regression", "[optim]") {
  const Regression data;
  auto fit = [&](Optimizer& opt, nn::Linear& model, int steps) {
    for (int i = 0; i < steps; ++i) {
      opt.zero_grad();
      backward_on(model, data, 0, 16);
      opt.step();
    }
    return loss_of(model, data);
  };
  SECTION("SGD with Nesterov momentum") {
    auto model = make_linear();
    const double before = loss_of(*model, data);
    SGD opt(model->named_parameters(), SGDOptions(0.05).momentum(0.9).nesterov(true));
    CHECK(before > 1);
    CHECK(fit(opt, *model, 300) < 1e-10);
  }
  SECTION("Adam") {
    auto model = make_linear();
    Adam opt(model->named_parameters(), AdamOptions(0.05));
    CHECK(fit(opt, *model, 600) < 1e-8);
  }
  SECTION("AdamW without decay reaches the exact weights") {
    auto model = make_linear();
    AdamW opt(model->named_parameters(), AdamOptions(0.05).amsgrad(true));
    fit(opt, *model, 800);
    const auto w = model->weight.to_vector();
    CHECK(w[0] == Approx(1).margin(1e-4));
    CHECK(w[1] == Approx(-2).margin(1e-4));
    CHECK(w[2] == Approx(0.5).margin(1e-4));
    CHECK(model->bias.item() == Approx(0.3).margin(1e-4));
  }
}

TEST_CASE("step skips parameters without a gradient, zero_grad clears to undefined, nothing is recorded",
          "[optim]") {
  Tensor a = tensor({1, 2}, {2}, DType::float64).requires_grad_();
  Tensor b = tensor({3, 4}, {2}, DType::float64).requires_grad_();
  SGD opt({{"a", a}, {"b", b}}, SGDOptions(0.5).momentum(0.9));
  a.set_grad(tensor({1, -1}, {2}, DType::float64));
  opt.step();
  CHECK(a.to_vector() == std::vector<double>{0.5, 2.5});
  CHECK(b.to_vector() == std::vector<double>{3, 4});
  CHECK(opt.param_state("a").step == 1);
  CHECK(opt.param_state("b").step == 0);
  CHECK_FALSE(opt.param_state("b").buffer("momentum_buffer").defined());
  // The first momentum buffer is the gradient itself (no dampening on step 1).
  CHECK(opt.param_state("a").buffer("momentum_buffer").to_vector() == std::vector<double>{1, -1});
  // The update is in place, outside the graph.
  CHECK(a.is_leaf());
  CHECK(a.requires_grad());
  opt.zero_grad();
  CHECK_FALSE(a.grad().defined());
  CHECK_FALSE(b.grad().defined());
  REQUIRE_THROWS_WITH(opt.param_state("c"), Contains("SGD: no parameter named 'c'"));
}

TEST_CASE("the OpenMP path of a large tensor gives the closed-form first Adam step", "[optim]") {
  // First step: m̂ = g, v̂ = g², so θ ← θ − lr·g/(|g| + ε): every element moves by about lr.
  const std::int64_t n = 100003;  // several OpenMP chunks and a ragged tail
  Generator gen(3);
  Tensor theta = randn({n}, gen, DType::float64).requires_grad_();
  const std::vector<double> before = theta.to_vector();
  const Tensor grad = randn({n}, gen, DType::float64);
  theta.set_grad(grad);
  Adam opt({{"theta", theta}}, AdamOptions(0.01).eps(1e-8));
  opt.step();
  const std::vector<double> after = theta.to_vector(), g = grad.to_vector();
  double worst = 0;
  for (std::int64_t i = 0; i < n; ++i)
    worst = std::max(worst, std::abs(after[i] - (before[i] - 0.01 * g[i] / (std::abs(g[i]) + 1e-8))));
  CHECK(worst < 1e-15);
}

TEST_CASE("state round trip: save, continue, restore into a fresh optimizer, continue: identical", "[optim][state]") {
  const Regression data;
  const int k = 4;
  // Gradients come from the model itself, so any difference in the restored state would
  // change every later gradient too.
  auto run = [&](Optimizer& opt, nn::Linear& model, int steps) {
    for (int i = 0; i < steps; ++i) {
      opt.zero_grad();
      backward_on(model, data, 0, 16);
      opt.step();
    }
  };
  auto check_optimizer = [&](auto make) {
    auto model = make_linear(5);
    auto opt = make(*model);
    run(*opt, *model, 3);
    const OptimizerState saved = opt->state_dict();
    const auto saved_values = values_of(model->named_parameters());
    run(*opt, *model, k);
    const auto continued = values_of(model->named_parameters());
    // The snapshot did not follow the later steps.
    for (const auto& [name, s] : saved.params) CHECK(s.step == 3);

    auto fresh_model = make_linear(99);  // different initial values, overwritten below
    const auto fresh_params = fresh_model->named_parameters();
    for (std::size_t i = 0; i < fresh_params.size(); ++i) {
      Tensor p = fresh_params[i].second;
      p.copy_(Tensor::from_vector(saved_values[i], p.shape()));
    }
    auto fresh = make(*fresh_model);
    fresh->load_state_dict(saved);
    run(*fresh, *fresh_model, k);
    CHECK(values_of(fresh_model->named_parameters()) == continued);  // bit for bit
    const OptimizerState a = opt->state_dict(), b = fresh->state_dict();
    REQUIRE(a.params.size() == b.params.size());
    for (std::size_t i = 0; i < a.params.size(); ++i) {
      CHECK(a.params[i].second.step == b.params[i].second.step);
      for (std::size_t j = 0; j < a.params[i].second.buffers.size(); ++j)
        CHECK(a.params[i].second.buffers[j].second.to_vector() == b.params[i].second.buffers[j].second.to_vector());
    }
  };
  SECTION("SGD, two groups, Nesterov") {
    check_optimizer([](nn::Linear& m) {
      return std::make_unique<SGD>(std::vector<ParamGroup<SGDOptions>>{
          {{{"weight", m.weight}}, SGDOptions(0.05).momentum(0.9).nesterov(true).weight_decay(0.01)},
          {{{"bias", m.bias}}, SGDOptions(0.02).momentum(0.5).dampening(0.1)}});
    });
  }
  SECTION("AdamW with amsgrad") {
    check_optimizer([](nn::Linear& m) {
      return std::make_unique<AdamW>(m.named_parameters(), AdamOptions(0.05).weight_decay(0.1).amsgrad(true));
    });
  }
  SECTION("Adam: the hyper-parameters travel with the state") {
    auto model = make_linear();
    Adam opt(model->named_parameters(), AdamOptions(0.01).betas({0.8, 0.95}).amsgrad(true));
    backward_on(*model, data, 0, 16);
    opt.step();
    Adam other(make_linear()->named_parameters(), AdamOptions(0.5));
    other.load_state_dict(opt.state_dict());
    CHECK(other.hyper_parameters(0) == opt.hyper_parameters(0));
    CHECK(other.options(0).betas().first == 0.8);
    CHECK(other.options(0).amsgrad());
    CHECK(other.param_state("weight").buffer("max_exp_avg_sq").to_vector() ==
          opt.param_state("weight").buffer("max_exp_avg_sq").to_vector());
  }
}

TEST_CASE("load_state_dict refuses a state that does not fit, and changes nothing then", "[optim][state]") {
  const Regression data;
  auto model = make_linear();
  Adam opt(model->named_parameters(), AdamOptions(0.01));
  backward_on(*model, data, 0, 16);
  opt.step();
  const OptimizerState good = opt.state_dict();
  Adam target(make_linear()->named_parameters(), AdamOptions(0.02));

  SECTION("another optimizer") {
    SGD sgd(make_linear()->named_parameters(), SGDOptions(0.1));
    REQUIRE_THROWS_WITH(sgd.load_state_dict(good), Contains("SGD: load_state_dict: the state is from Adam, not SGD"));
    AdamW adamw(make_linear()->named_parameters(), AdamOptions(0.1));
    REQUIRE_THROWS_WITH(adamw.load_state_dict(good), Contains("the state is from Adam, not AdamW"));
  }
  SECTION("other parameter names") {
    OptimizerState s = good;
    s.groups[0].params = {"weight", "b"};
    REQUIRE_THROWS_WITH(target.load_state_dict(s),
                        Contains("group 0 holds [weight, b] in the state but [weight, bias] here"));
  }
  SECTION("another number of groups") {
    OptimizerState s = good;
    s.groups.push_back(s.groups[0]);
    REQUIRE_THROWS_WITH(target.load_state_dict(s), Contains("the state has 2 groups, this optimizer 1"));
  }
  SECTION("a missing hyper-parameter") {
    OptimizerState s = good;
    s.groups[0].hyper_parameters.pop_back();
    REQUIRE_THROWS_WITH(target.load_state_dict(s),
                        Contains("hyper-parameters are [lr, beta1, beta2, eps, weight_decay], expected "
                                 "[lr, beta1, beta2, eps, weight_decay, amsgrad]"));
  }
  SECTION("a buffer of the wrong shape; the optimizer keeps its settings") {
    OptimizerState s = good;
    s.groups[0].hyper_parameters[0].second = 0.5;  // would change lr if the load went through
    s.params[0].second.buffers[1].second = zeros({2, 3}, DType::float64);
    REQUIRE_THROWS_WITH(target.load_state_dict(s),
                        Contains("'weight' buffer 'exp_avg_sq' is [2, 3] float64, the parameter is [1, 3] float64"));
    CHECK(target.lr(0) == 0.02);
    CHECK(target.param_state("weight").step == 0);
  }
  SECTION("missing buffers (amsgrad needs max_exp_avg_sq)") {
    OptimizerState s = good;
    s.groups[0].hyper_parameters[5].second = 1;  // amsgrad
    REQUIRE_THROWS_WITH(target.load_state_dict(s),
                        Contains("'weight' has buffers [exp_avg, exp_avg_sq], expected [exp_avg, exp_avg_sq, max_exp_avg_sq]"));
    CHECK_FALSE(target.options(0).amsgrad());
  }
  SECTION("an unknown parameter, a bad step, a bad value") {
    OptimizerState s = good;
    s.params[0].first = "nope";
    REQUIRE_THROWS_WITH(target.load_state_dict(s), Contains("an entry for 'nope', which is not a parameter here"));
    s = good;
    s.params[0].second.step = 0;
    REQUIRE_THROWS_WITH(target.load_state_dict(s), Contains("'weight' has step 0 (must be >= 1)"));
    s = good;
    s.groups[0].hyper_parameters[1].second = 1.5;  // beta1
    REQUIRE_THROWS_WITH(target.load_state_dict(s), Contains("Adam: invalid beta1 1.5 (must be in [0, 1))"));
  }
}

TEST_CASE("bad hyper-parameters are refused with the setting named", "[optim][errors]") {
  Tensor p = zeros({2}, DType::float64).requires_grad_();
  const NamedTensors params{{"p", p}};
  REQUIRE_THROWS_AS(SGD(params, SGDOptions(-0.1)), ValueError);
  REQUIRE_THROWS_WITH(SGD(params, SGDOptions(-0.1)), Contains("SGD: invalid learning rate -0.1 (must be >= 0)"));
  REQUIRE_THROWS_WITH(SGD(params, SGDOptions(NAN)), Contains("SGD: invalid learning rate nan"));
  REQUIRE_THROWS_WITH(SGD(params, SGDOptions(0.1).momentum(-0.5)), Contains("invalid momentum -0.5"));
  REQUIRE_THROWS_WITH(SGD(params, SGDOptions(0.1).weight_decay(-1)), Contains("invalid weight_decay -1 (must be >= 0)"));
  REQUIRE_THROWS_WITH(SGD(params, SGDOptions(0.1).momentum(0.9).dampening(2)), Contains("invalid dampening 2"));
  REQUIRE_THROWS_WITH(SGD(params, SGDOptions(0.1).nesterov(true)),
                      Contains("Nesterov momentum requires a momentum > 0 and zero dampening (got momentum 0, dampening 0)"));
  REQUIRE_THROWS_WITH(SGD(params, SGDOptions(0.1).momentum(0.9).dampening(0.1).nesterov(true)),
                      Contains("zero dampening (got momentum 0.9, dampening 0.1)"));
  REQUIRE_THROWS_WITH(Adam(params, AdamOptions(-1e-3)), Contains("Adam: invalid learning rate -0.001"));
  REQUIRE_THROWS_WITH(Adam(params, AdamOptions().betas({1.0, 0.999})), Contains("Adam: invalid beta1 1 (must be in [0, 1))"));
  REQUIRE_THROWS_WITH(Adam(params, AdamOptions().betas({0.9, -0.1})), Contains("invalid beta2 -0.1 (must be in [0, 1))"));
  REQUIRE_THROWS_WITH(AdamW(params, AdamOptions().eps(-1e-8)), Contains("AdamW: invalid eps -1e-08"));
  REQUIRE_THROWS_WITH(AdamW(params, AdamOptions().weight_decay(-0.1)), Contains("AdamW: invalid weight_decay -0.1"));
  // Later changes are checked too.
  SGD sgd(params, SGDOptions(0.1));
  REQUIRE_THROWS_WITH(sgd.set_lr(0, -1), Contains("invalid learning rate -1"));
  CHECK(sgd.lr(0) == 0.1);
  REQUIRE_THROWS_WITH(sgd.set_lr(3, 0.1), Contains("SGD: group 3 out of range (1 groups)"));
}

TEST_CASE("bad parameter lists are refused", "[optim][errors]") {
  Tensor a = zeros({2, 3}, DType::float64).requires_grad_();
  REQUIRE_THROWS_WITH(SGD(NamedTensors{}, SGDOptions(0.1)), Contains("SGD: got an empty parameter list"));
  REQUIRE_THROWS_WITH(SGD({{"a", a}, {"a", zeros({1}).requires_grad_()}}, SGDOptions(0.1)),
                      Contains("the parameter name 'a' appears twice"));
  REQUIRE_THROWS_WITH(Adam(std::vector<ParamGroup<AdamOptions>>{{{{"a", a}}, AdamOptions()}, {{{"tied", a}}, AdamOptions()}}),
                      Contains("parameter 'tied' is the same tensor as 'a'"));
  REQUIRE_THROWS_WITH(SGD({{"t", a.transpose(0, 1)}}, SGDOptions(0.1)), Contains("parameter 't' is not a leaf"));
  REQUIRE_THROWS_WITH(SGD({{"t", a.detach().transpose(0, 1)}}, SGDOptions(0.1)),
                      Contains("parameter 't' of shape [3, 2] is not contiguous"));
  REQUIRE_THROWS_AS(SGD({{"i", Tensor::from_vector<std::int64_t>({1}, {1})}}, SGDOptions(0.1)), DTypeError);
  REQUIRE_THROWS_WITH(SGD({{"u", Tensor()}}, SGDOptions(0.1)), Contains("parameter 'u' is undefined"));
}

TEST_CASE("weight_decay_groups: matrices decay, gains, biases and (by default) embeddings do not", "[optim][groups]") {
  manual_seed(0);
  nn::TransformerLMConfig c;
  c.vocab_size = 11;
  c.max_seq_len = 8;
  c.n_layers = 2;
  c.block.d_model = 8;
  c.block.n_heads = 2;
  nn::TransformerLM lm(c);
  const auto all = lm.named_parameters();

  auto names = [](const NamedTensors& params) {
    std::vector<std::string> out;
    for (const auto& [name, _] : params) out.push_back(name);
    return out;
  };
  auto contains = [&](const NamedTensors& params, const std::string& name) {
    const auto n = names(params);
    return std::find(n.begin(), n.end(), name) != n.end();
  };

  const auto groups = weight_decay_groups(lm, AdamOptions(3e-4).weight_decay(0.1));
  REQUIRE(groups.size() == 2);
  CHECK(groups[0].options.weight_decay() == 0.1);
  CHECK(groups[1].options.weight_decay() == 0.0);
  CHECK(groups[1].options.lr() == 3e-4);
  CHECK(groups[0].params.size() + groups[1].params.size() == all.size());
  for (const auto& [name, p] : groups[0].params) {
    INFO(name);
    CHECK(p.dim() >= 2);
  }
  for (const auto& [name, p] : groups[1].params) {
    INFO(name);
    CHECK((p.dim() < 2 || name == "tok_emb.weight" || name == "pos_emb.weight"));
  }
  CHECK(contains(groups[0].params, "blocks.0.attn.qkv.weight"));
  CHECK(contains(groups[1].params, "blocks.0.attn.qkv.bias"));
  CHECK(contains(groups[1].params, "tok_emb.weight"));
  CHECK(contains(groups[1].params, "blocks.1.ffn_residual.norm.weight"));
  // Names keep the model's order within each group.
  CHECK(names(groups[0].params).front() == "blocks.0.attn.qkv.weight");

  const auto with_embeddings = split_for_weight_decay(lm, /*decay_embeddings=*/true);
  CHECK(contains(with_embeddings.decay, "tok_emb.weight"));
  CHECK(contains(with_embeddings.decay, "pos_emb.weight"));
  CHECK(with_embeddings.decay.size() == groups[0].params.size() + 2);

  // The groups feed an optimizer directly.
  AdamW opt(groups);
  CHECK(opt.num_groups() == 2);
  CHECK(opt.hyper_parameters(1)[4] == std::pair<std::string, double>("weight_decay", 0.0));
}

TEST_CASE("k accumulated micro-batches equal one batch k times larger", "[optim][accumulation]") {
  const Regression data;
  const int k = 4;  // 4 micro-batches of 4 rows = one batch of 16
  auto big = make_linear(11), small = make_linear(11);
  AdamW opt_big(big->named_parameters(), AdamOptions(0.01).weight_decay(0.1));
  AdamW opt_small(small->named_parameters(), AdamOptions(0.01).weight_decay(0.1));
  for (int step = 0; step < 3; ++step) {
    opt_big.zero_grad();
    backward_on(*big, data, 0, 16);  // mean over 16 rows
    opt_small.zero_grad();
    for (int micro = 0; micro < k; ++micro)
      backward_on(*small, data, 4 * micro, 4 * micro + 4, 1.0 / k);  // mean over 4 rows, / k
    const auto gb = big->weight.grad().to_vector(), gs = small->weight.grad().to_vector();
    for (std::size_t i = 0; i < gb.size(); ++i) CHECK(gs[i] == Approx(gb[i]).epsilon(1e-13));
    CHECK(small->bias.grad().item() == Approx(big->bias.grad().item()).epsilon(1e-13));
    opt_big.step();
    opt_small.step();
  }
  const auto wb = big->weight.to_vector(), ws = small->weight.to_vector();
  for (std::size_t i = 0; i < wb.size(); ++i) CHECK(ws[i] == Approx(wb[i]).epsilon(1e-12));
  // Without the 1/k scaling the gradient would be k times too large: the test can tell.
  small->zero_grad();
  for (int micro = 0; micro < k; ++micro) backward_on(*small, data, 4 * micro, 4 * micro + 4);
  big->zero_grad();
  backward_on(*big, data, 0, 16);
  CHECK(small->bias.grad().item() == Approx(k * big->bias.grad().item()).epsilon(1e-12));
}
