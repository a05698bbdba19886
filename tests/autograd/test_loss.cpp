// test_loss.cpp — cross_entropy and mse_loss: gradcheck of every reduction (with ignore_index,
// label smoothing and the (N, C, d) layout), the fused cross_entropy against its composition
// from primitive ops, PyTorch references, huge logits, and error messages.
#include <cmath>
#include <string>

#include "support/gradcheck_catch.hpp"
#include "support/reference.hpp"

using namespace tapegrad;
using tapegrad::testing::ops_reference;
using tapegrad::testing::param;

namespace {

const char* reduction_name(Reduction r) {
  return r == Reduction::none ? "none" : r == Reduction::mean ? "mean" : "sum";
}

// cross_entropy written with primitive ops only: log_softmax by its formula, the target picked
// by a one-hot mask, ignored targets zeroed by a row mask, as PyTorch defines it.
Tensor composed_cross_entropy(const Tensor& logits, const Tensor& targets, Reduction reduction,
                              std::int64_t ignore_index, double eps) {
  const std::int64_t class_dim = logits.dim() == 1 ? 0 : 1;
  const std::int64_t C = logits.shape()[class_dim];
  // (N, C, d1, ...): a target r = n·inner + i, with inner = d1·...
  const std::int64_t inner = logits.dim() <= 2 ? 1 : targets.numel() / logits.shape()[0];
  const std::vector<std::int64_t> t = targets.to_vector<std::int64_t>();
  std::vector<double> onehot(logits.numel(), 0.0), keep(t.size(), 0.0);
  double count = 0;
  for (std::size_t r = 0; r < t.size(); ++r) {
    if (t[r] == ignore_index) continue;
    const std::int64_t n = static_cast<std::int64_t>(r) / inner, i = static_cast<std::int64_t>(r) % inner;
    onehot[(n * C + t[r]) * inner + i] = 1;
    keep[r] = 1;
    ++count;
  }
  const DType dt = logits.dtype();
  const Tensor shifted = sub(logits, max(logits, class_dim, true));
  const Tensor logp = sub(shifted, log(sum(exp(shifted), {class_dim}, true)));
  const Tensor nll = neg(sum(mul(logp, tensor(onehot, logits.shape(), dt)), {class_dim}));
  const Tensor smooth = neg(mean(logp, {class_dim}));
  const Tensor rows = mul(add(mul(nll, 1 - eps), mul(smooth, eps)), tensor(keep, targets.shape(), dt));
  if (reduction == Reduction::none) return rows;
  if (reduction == Reduction::sum) return sum(rows);
  return div(sum(rows), count);
}

Tensor targets_of(const std::vector<double>& values, const Shape& shape) {
  return tensor(values, shape, DType::int64);
}

}  // namespace

TEST_CASE("cross_entropy passes gradcheck", "[loss][cross_entropy]") {
  const Tensor logits = param({5, 4}, 11);
  const Tensor targets = targets_of({3, -100, 0, 1, -100}, {5});
  for (Reduction reduction : {Reduction::mean, Reduction::sum, Reduction::none})
    for (double eps : {0.0, 0.1}) {
      INFO("reduction " << reduction_name(reduction) << ", label_smoothing " << eps);
      CHECK_GRADCHECK([&](const TensorList& in) { return cross_entropy(in[0], targets, reduction, -100, eps); },
                      {logits});
    }
  SECTION("(N, C, d1, d2) layout with an ignore_index that is a valid class") {
    const Tensor x = param({2, 3, 2, 2}, 12);
    const Tensor t = targets_of({0, 2, 1, 1, 2, 2, 0, 1}, {2, 2, 2});
    for (Reduction reduction : {Reduction::mean, Reduction::sum, Reduction::none}) {
      INFO("reduction " << reduction_name(reduction));
      CHECK_GRADCHECK([&](const TensorList& in) { return cross_entropy(in[0], t, reduction, 1, 0.2); }, {x});
    }
  }
  SECTION("one unbatched row: logits (C), a 0-d target") {
    CHECK_GRADCHECK([](const TensorList& in) {
      return cross_entropy(in[0], tensor({2}, {}, DType::int64), Reduction::none, -100, 0.3);
    }, {param({6}, 13)});
  }
  SECTION("non-contiguous logits") {
    CHECK_GRADCHECK([&](const TensorList& in) {
      return cross_entropy(in[0].transpose(0, 1), targets, Reduction::mean, -100, 0.1);
    }, {param({4, 5}, 14)});
  }
}

TEST_CASE("fused cross_entropy matches its composition, forward and backward", "[loss][cross_entropy]") {
  struct Case {
    Shape logits_shape;
    Tensor targets;
    std::int64_t ignore_index;
  };
  Generator gen(21);
  // The (64, 1000) case is big enough for the OpenMP path.
  std::vector<double> many(64);
  for (std::size_t i = 0; i < many.size(); ++i) many[i] = i % 7 == 3 ? -100 : static_cast<double>((i * 37) % 1000);
  const std::vector<Case> cases{
      {{6, 5}, targets_of({3, -100, 0, 4, -100, 1}, {6}), -100},
      {{2, 4, 3}, targets_of({0, 1, 3, 1, 2, 2}, {2, 3}), 1},
      {{7}, targets_of({5}, {}), -100},
      {{64, 1000}, targets_of(many, {64}), -100},
  };
  for (const Case& c : cases)
    for (Reduction reduction : {Reduction::mean, Reduction::sum, Reduction::none})
      for (double eps : {0.0, 0.15}) {
        INFO("logits " << shape_str(c.logits_shape) << ", reduction " << reduction_name(reduction)
                       << ", label_smoothing " << eps);
        const Tensor values = randn(c.logits_shape, gen, DType::float64);
        const Tensor fused_x = values.clone().requires_grad_(), composed_x = values.clone().requires_grad_();
        const Tensor fused = cross_entropy(fused_x, c.targets, reduction, c.ignore_index, eps);
        const Tensor composed = composed_cross_entropy(composed_x, c.targets, reduction, c.ignore_index, eps);
        CHECK_CLOSE("loss", fused, composed, 1e-12, 1e-12);
        const Tensor dout = randn(fused.shape(), gen, DType::float64);
        fused.backward(dout);
        composed.backward(dout);
        CHECK_CLOSE("dlogits", fused_x.grad(), composed_x.grad(), 1e-12, 1e-10);
      }
}

TEST_CASE("cross_entropy matches PyTorch", "[loss][cross_entropy][reference]") {
  const auto& ref = ops_reference();
  const std::vector<std::pair<std::string, Reduction>> cases{
      {"mean_ls0", Reduction::mean},  {"mean_ls0.1", Reduction::mean}, {"sum_ls0", Reduction::sum},
      {"sum_ls0.1", Reduction::sum},  {"none_ls0", Reduction::none},   {"none_ls0.1", Reduction::none},
      {"ncd_mean", Reduction::mean},  {"ncd_none", Reduction::none},   {"single", Reduction::mean},
      {"all_ignored", Reduction::mean},
  };
  for (const auto& [name, reduction] : cases)
    for (DType dtype : {DType::float64, DType::float32}) {
      const std::string p = "cross_entropy." + name + ".";
      INFO(p << " in " << dtype_name(dtype));
      const double tol = dtype == DType::float64 ? 1e-12 : 1e-5;
      Tensor logits = ref.get(p + "logits", dtype).requires_grad_();
      const Tensor loss = cross_entropy(logits, ref.get(p + "targets"), reduction,
                                        ref.integer(p + "ignore_index"), ref.scalar(p + "label_smoothing"));
      CHECK(loss.dtype() == dtype);
      CHECK_CLOSE(p + "loss", loss, ref.get(p + "loss"), tol, tol);
      loss.backward(ref.get(p + "dout", dtype));
      CHECK_CLOSE(p + "dlogits", logits.grad(), ref.get(p + "dlogits"), tol, tol);
    }
  // The all-ignored mean is 0/0: NaN, with a zero gradient (compare_tensors matches NaN to NaN,
  // so say it outright).
  CHECK(std::isnan(ref.get("cross_entropy.all_ignored.loss").item()));
}

TEST_CASE("cross_entropy is stable for logits of 1e4", "[loss][cross_entropy]") {
  for (DType dtype : {DType::float64, DType::float32}) {
    INFO(dtype_name(dtype));
    Tensor logits = tensor({1e4, 0, -1e4, 0, 1e4, 1e4 - 1}, {2, 3}, dtype).requires_grad_();
    const Tensor loss = cross_entropy(logits, targets_of({1, 2}, {2}), Reduction::none);
    const std::vector<double> l = loss.to_vector();
    // row 0: lse = 1e4 (exactly, in float), loss = 1e4 − 0; row 1: lse = 1e4 + log(1 + e⁻¹)
    CHECK(l[0] == Approx(1e4).epsilon(1e-7));
    CHECK(l[1] == Approx(1 + std::log(1 + std::exp(-1.0))).margin(1e-3));
    loss.sum().backward();
    const std::vector<double> g = logits.grad().to_vector();
    for (double v : g) CHECK(std::isfinite(v));
    CHECK(g[1] == Approx(-1).margin(1e-6));  // softmax ≈ (1, 0, 0), target 1
  }
}

TEST_CASE("cross_entropy with a -inf logit (a class masked out) is finite without label smoothing",
          "[loss][cross_entropy]") {
  // As PyTorch: exp(-inf) = 0 adds nothing to the softmax. With label smoothing the masked
  // class's −log p = inf enters the smoothing term, so the loss is inf (PyTorch's too).
  for (DType dtype : {DType::float64, DType::float32}) {
    INFO(dtype_name(dtype));
    Tensor logits = tensor({0.5, -INFINITY, 1.5, 2, -INFINITY, -1}, {2, 3}, dtype).requires_grad_();
    const Tensor loss = cross_entropy(logits, targets_of({0, 2}, {2}), Reduction::none);
    const std::vector<double> l = loss.to_vector();
    CHECK(l[0] == Approx(std::log(std::exp(0.5) + std::exp(1.5)) - 0.5).epsilon(1e-6));
    CHECK(l[1] == Approx(std::log(std::exp(2.0) + std::exp(-1.0)) + 1).epsilon(1e-6));
    loss.sum().backward();
    const std::vector<double> g = logits.grad().to_vector();
    CHECK(g[1] == 0);
    CHECK(g[4] == 0);
    for (double v : g) CHECK(std::isfinite(v));
    const Tensor smoothed = cross_entropy(logits, targets_of({0, 2}, {2}), Reduction::none, -100, 0.1);
    for (double v : smoothed.to_vector()) CHECK(v == INFINITY);
  }
}

TEST_CASE("cross_entropy rejects bad targets and shapes", "[loss][cross_entropy][errors]") {
  const Tensor logits = zeros({3, 5});
  SECTION("a target out of [0, C) names the target and C") {
    REQUIRE_THROWS_AS(cross_entropy(logits, targets_of({0, 5, 1}, {3})), ValueError);
    REQUIRE_THROWS_WITH(cross_entropy(logits, targets_of({0, 5, 1}, {3})),
                        Catch::Contains("cross_entropy: target 5 (element 1 of targets)") &&
                            Catch::Contains("C = 5"));
    REQUIRE_THROWS_WITH(cross_entropy(logits, targets_of({0, -1, 1}, {3})), Catch::Contains("target -1"));
    // -100 is fine only while it is the ignore_index
    REQUIRE_NOTHROW(cross_entropy(logits, targets_of({0, -100, 1}, {3})));
    REQUIRE_THROWS_WITH(cross_entropy(logits, targets_of({0, -100, 1}, {3}), Reduction::mean, 4),
                        Catch::Contains("target -100"));
  }
  SECTION("shapes") {
    REQUIRE_THROWS_AS(cross_entropy(logits, targets_of({0, 1}, {2})), ShapeError);
    REQUIRE_THROWS_WITH(cross_entropy(logits, targets_of({0, 1}, {2})),
                        Catch::Contains("targets of shape [2] do not match logits of shape [3, 5]") &&
                            Catch::Contains("expected targets of shape [3]"));
    REQUIRE_THROWS_WITH(cross_entropy(zeros({2, 3, 4}), targets_of({0, 1}, {2})),
                        Catch::Contains("expected targets of shape [2, 4]"));
    REQUIRE_THROWS_WITH(cross_entropy(zeros({}), targets_of({0}, {})),
                        Catch::Contains("cross_entropy: logits must have a class dim"));
  }
  SECTION("dtypes and label_smoothing") {
    REQUIRE_THROWS_AS(cross_entropy(logits, tensor({0, 1, 2}, {3})), DTypeError);
    REQUIRE_THROWS_WITH(cross_entropy(logits, tensor({0, 1, 2}, {3})),
                        Catch::Contains("targets must be int64") && Catch::Contains("float32"));
    REQUIRE_THROWS_AS(cross_entropy(logits, targets_of({0, 1, 2}, {3}), Reduction::mean, -100, 1.5), ValueError);
    REQUIRE_THROWS_WITH(cross_entropy(logits, targets_of({0, 1, 2}, {3}), Reduction::mean, -100, -0.1),
                        Catch::Contains("label_smoothing must be in [0, 1]"));
  }
}

TEST_CASE("mse_loss", "[loss][mse]") {
  const Tensor x = param({2, 3}, 31), y = param({2, 3}, 32);
  for (Reduction reduction : {Reduction::mean, Reduction::sum, Reduction::none}) {
    INFO("reduction " << reduction_name(reduction));
    CHECK_GRADCHECK([reduction](const TensorList& in) { return mse_loss(in[0], in[1], reduction); }, {x, y});
  }
  const Tensor a = tensor({1, 2, 3}, {3}, DType::float64), b = tensor({0, 4, 3}, {3}, DType::float64);
  CHECK(mse_loss(a, b).item() == Approx(5.0 / 3));
  CHECK(mse_loss(a, b, Reduction::sum).item() == 5);
  CHECK(mse_loss(a, b, Reduction::none).to_vector() == std::vector<double>{1, 4, 0});
  // (N, 1) against (N) would broadcast to (N, N): refused.
  REQUIRE_THROWS_AS(mse_loss(zeros({3, 1}), zeros({3})), ShapeError);
  REQUIRE_THROWS_WITH(mse_loss(zeros({3, 1}), zeros({3})),
                      Catch::Contains("mse_loss: input of shape [3, 1] and target of shape [3] must have the same shape"));
}
