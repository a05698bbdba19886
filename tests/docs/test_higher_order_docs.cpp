// test_higher_order_docs.cpp — the code of docs/higher-order.md compiles and does what the page
// says: tanh's second derivative and the graph of its recorded backward, a Hessian-vector
// product equal to finite differences of the gradient, a gradient-penalty training loop whose
// parameter gradients equal finite differences of its loss, and a user op made twice
// differentiable (refused by name before, passing gradgradcheck after).
#include <cmath>
#include <iostream>
#include <string>
#include <vector>

#include <catch2/catch.hpp>
#include <tapegrad/tapegrad.hpp>

#include "support/docs.hpp"
#include "support/tensor_diff.hpp"

using namespace tapegrad;
using Catch::Contains;
using tapegrad::testing::cpp_blocks;
using tapegrad::testing::kDocsDir;
using tapegrad::testing::max_abs_diff;
using tapegrad::testing::read_text;

namespace {
#include "../../docs/snippets/higher_order_op.inc"

// The same op as the tutorial writes it: x captured detached, no DoubleBackward flag.
Tensor softplus_once(const Tensor& x) {
  Tensor out = log(exp(x.detach()) + 1.0);
  if (!should_record({x})) return out;
  record(out, "softplus", {x}, [x = x.detach()](const Tensor& dout) -> TensorList { return {dout * sigmoid(x)}; });
  return out;
}
}  // namespace

TEST_CASE("docs/higher-order.md: the blocks are the snippets", "[docs][higher_order]") {
  const auto blocks = cpp_blocks(read_text(kDocsDir + "/higher-order.md"));
  const std::vector<std::string> files = {"higher_order_tanh", "higher_order_hvp", "higher_order_penalty",
                                          "higher_order_op", "higher_order_gradgradcheck"};
  REQUIRE(blocks.size() == files.size());
  for (std::size_t i = 0; i < files.size(); ++i) {
    INFO("block " << i << " of docs/higher-order.md vs docs/snippets/" << files[i] << ".inc");
    CHECK(blocks[i] == read_text(kDocsDir + "/snippets/" + files[i] + ".inc"));
  }
}

TEST_CASE("docs/higher-order.md: tanh's second derivative through its recorded backward", "[docs][higher_order]") {
#include "../../docs/snippets/higher_order_tanh.inc"
  const double t = std::tanh(0.5);
  CHECK(dy.item() == Approx(1 - t * t).epsilon(1e-14));
  CHECK(d2y.item() == Approx(-2 * t * (1 - t * t)).epsilon(1e-14));
  // what the page prints: the recorded backward reuses the forward's tanh node
  const std::string g = graph_string(dy);
  CHECK_THAT(g, Contains("#1 tanh [] <- leaf [] (requires grad)"));
  CHECK_THAT(g, Contains("mul [] <- #1 tanh, #1 tanh"));
  CHECK_THAT(g, Contains("sub [] <- constant [], #2 mul"));
}

TEST_CASE("docs/higher-order.md: the Hessian-vector product equals finite differences", "[docs][higher_order]") {
#include "../../docs/snippets/higher_order_hvp.inc"
  const double eps = 1e-5;
  auto shifted_grad = [&](double sign) {
    TensorList t;
    for (std::size_t i = 0; i < theta.size(); ++i) t.push_back((theta[i].detach() + v[i] * (sign * eps)).requires_grad_());
    return grad({loss_of(t)}, t);
  };
  const TensorList plus = shifted_grad(1), minus = shifted_grad(-1);
  REQUIRE(hv.size() == 4);
  for (std::size_t i = 0; i < hv.size(); ++i) {
    INFO("parameter " << i);
    const double scale = max_abs_diff(hv[i], zeros(hv[i].shape(), DType::float64));
    CHECK(scale > 1e-3);  // not trivially zero
    CHECK(max_abs_diff(hv[i], (plus[i] - minus[i]) / (2 * eps)) < 1e-7 * (1 + scale));
  }
}

TEST_CASE("docs/higher-order.md: the gradient-penalty loop", "[docs][higher_order]") {
#include "../../docs/snippets/higher_order_penalty.inc"
  REQUIRE(losses.size() == 20);
  for (double l : losses) CHECK(std::isfinite(l));
  CHECK(losses.back() < losses.front());

  // The parameter gradients of L are its derivatives: central differences of L on one batch.
  Tensor batch = randn({16, 2}, gen, DType::float64);
  auto penalized = [&](bool record_grads) {
    Tensor p = batch.detach().requires_grad_();
    Tensor fp = mean(critic.forward(p));
    Tensor d = grad({fp}, {p}, {}, {.create_graph = record_grads})[0];
    return fp + lambda * sum(d * d);
  };
  opt.zero_grad();
  penalized(true).backward();
  const Tensor w = critic.named_parameters()[0].second;  // the first Linear's weight (16, 2)
  const Tensor analytic = w.grad().detach().clone();
  const double h = 1e-6;
  for (std::int64_t i : {0, 7, 31}) {
    INFO("weight element " << i);
    double* pw = w.data<double>() + i;
    const double saved = *pw;
    *pw = saved + h;
    const double up = penalized(false).item();
    *pw = saved - h;
    const double down = penalized(false).item();
    *pw = saved;
    CHECK(analytic.to_vector()[static_cast<std::size_t>(i)] == Approx((up - down) / (2 * h)).epsilon(1e-6).margin(1e-9));
  }
}

TEST_CASE("docs/higher-order.md: a user op, refused by name until it is twice differentiable", "[docs][higher_order]") {
  Tensor x = scalar_tensor(0.3, DType::float64).requires_grad_();
  REQUIRE_THROWS_WITH(grad({softplus_once(x)}, {x}, {}, {.create_graph = true}),
                      Contains("backward of 'softplus' (output shape []) is not written with differentiable ops"));
  const Tensor d1 = grad({softplus(x)}, {x}, {}, {.create_graph = true})[0];
  const double s = 1 / (1 + std::exp(-0.3));
  CHECK(d1.item() == Approx(s).epsilon(1e-14));
  CHECK(grad({d1}, {x})[0].item() == Approx(s * (1 - s)).epsilon(1e-14));  // sigmoid' = s(1 − s)

#include "../../docs/snippets/higher_order_gradgradcheck.inc"
  CHECK(twice.ok);
  CHECK_THAT(twice.report, Contains("gradgradcheck passed"));
  // A wrong second derivative fails it: a backward whose value is right but whose recorded
  // ops hide x's dependence (sigmoid of a detached x), so its derivative comes out zero.
  auto wrong = [](const TensorList& in) {
    const Tensor& xi = in[0];
    Tensor out = log(exp(xi.detach()) + 1.0);
    record(out, "softplus_wrong", {xi}, [xi](const Tensor& dout) -> TensorList {
      return {dout * (sigmoid(xi.detach()) + 0.0 * xi)};
    }, DoubleBackward::supported);
    return out;
  };
  CHECK_FALSE(gradgradcheck(wrong, {a}).ok);
}
