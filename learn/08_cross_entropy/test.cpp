// The properties exercise 8 is graded on (tag [learn.08]): the loss and its gradient against
// PyTorch's, stability at logits of ±1000, the gradient against central differences and
// agreement with tapegrad's cross_entropy, at random N, C and targets. A gradient N times too
// large is named as the mean's missing 1/N.
#include <cmath>

#include "08_cross_entropy/exercise.hpp"
#include "grading/grading.hpp"

using namespace tapegrad;
using namespace learn::grading;  // the sentences: tensors_close, gradient_matches_numerical, ...

namespace reference {
#include "reference.inc"
}

namespace {

Tensor int64(const std::vector<double>& values, const Shape& shape) { return tensor(values, shape, DType::int64); }

// dL/dlogits against the right one, naming a forgotten 1/N (a gradient N times too large)
std::string gradient_close(const Tensor& got, const Tensor& want, const std::string& what, const std::string& source) {
  const std::string wrong = tensors_close(what, got, want, source);
  const std::int64_t n = want.shape()[0];
  if (wrong.empty() || n == 1 || !tensors_close(what, got, want * static_cast<double>(n), source).empty()) return wrong;
  return wrong + ": it is N = " + std::to_string(n) + " times too large. The loss is the mean over the N rows, " +
         "(1/N) Σ_n loss_n, so each row's gradient is divided by N: (softmax - one_hot) / N";
}

// random logits (N, C) as a float64 leaf, targets in [0, C), and a weight for L = w · loss
struct Inputs {
  std::int64_t n, c;
  Generator gen;
  Tensor logits, targets, weight;
  Inputs(std::int64_t n_, std::int64_t c_, std::uint64_t seed) : n(n_), c(c_), gen(seed) {
    logits = leaf({n, c}, gen);
    targets = randint(0, c, {n}, gen);
    weight = randn({}, gen, DType::float64);
  }
  std::string of() const { return ", N = " + std::to_string(n) + " rows of C = " + std::to_string(c) + " classes"; }
};

}  // namespace

TEST_CASE("the loss matches PyTorch's cross_entropy (4 rows, 5 classes)", "[learn.08]") {
  const Tensor loss = learn::cross_entropy(float64(reference::logits, reference::logits_shape),
                                           int64(reference::targets, reference::targets_shape));
  LEARN_CHECK(tensors_close("the loss", loss, float64(reference::loss, reference::loss_shape), "PyTorch's"));
}

TEST_CASE("logits of +-1000 give a finite loss, PyTorch's (logsumexp subtracts the row's max)", "[learn.08]") {
  const Tensor loss = learn::cross_entropy(float64(reference::large, reference::large_shape),
                                           int64(reference::large_targets, reference::large_targets_shape));
  const double value = loss.item();
  LEARN_REQUIRE(std::isfinite(value) ? ""
                                     : "the loss of the rows (1000, 0, -1000), (-1000, -999, -1001.5) and (800, 803, "
                                       "799) is " + num(value) +
                                           ": exp(1000) overflows a double to inf, and exp(-1000) underflows to 0, "
                                           "whose log is -inf. Compute logsumexp(r) = m + log Σ exp(r - m) with m the "
                                           "row's max: every exponent is then <= 0 and the sum >= 1");
  LEARN_CHECK(tensors_close("the loss at logits of +-1000", loss,
                            float64(reference::large_loss, reference::large_loss_shape), "PyTorch's"));
}

TEST_CASE("dL/dlogits matches PyTorch's: (softmax - one_hot) / N", "[learn.08]") {
  const Tensor logits = float64(reference::logits, reference::logits_shape).requires_grad_();
  learn::cross_entropy(logits, int64(reference::targets, reference::targets_shape)).backward();
  LEARN_CHECK(gradient_close(logits.grad(), float64(reference::dlogits, reference::dlogits_shape), "dL/dlogits",
                             "PyTorch's"));
}

TEST_CASE("dL/dlogits at logits of +-1000 is finite and PyTorch's", "[learn.08]") {
  const Tensor logits = float64(reference::large, reference::large_shape).requires_grad_();
  learn::cross_entropy(logits, int64(reference::large_targets, reference::large_targets_shape)).backward();
  LEARN_CHECK(gradient_close(logits.grad(), float64(reference::large_dlogits, reference::large_dlogits_shape),
                             "dL/dlogits at logits of +-1000", "PyTorch's"));
}

TEST_CASE("dL/dlogits matches the numerical derivative (random N, C and targets)", "[learn.08]") {
  const Inputs in(GENERATE(values<std::int64_t>({1, 3, 8})), GENERATE(values<std::int64_t>({2, 5})),
                  GENERATE(take(2, random(1, 1000))));
  const Tensor targets = in.targets;
  LEARN_CHECK(gradient_matches_numerical(
      [targets](const TensorList& x) { return learn::cross_entropy(x[0], targets); }, {in.logits},
      {"logits" + in.of()}));
}

TEST_CASE("the loss and dL/dlogits agree with tapegrad's cross_entropy (random N, C and targets)", "[learn.08]") {
  const Inputs in(GENERATE(values<std::int64_t>({1, 4, 16})), GENERATE(values<std::int64_t>({3, 10})),
                  GENERATE(take(2, random(1, 1000))));
  const Tensor targets = in.targets;
  const auto mine = [targets](const TensorList& x) { return learn::cross_entropy(x[0], targets); };
  const auto theirs = [targets](const TensorList& x) { return tapegrad::cross_entropy(x[0], targets); };
  LEARN_CHECK(tensors_close("the loss" + in.of(), mine({in.logits}), theirs({in.logits}), "tapegrad's cross_entropy"));
  // L = w · loss with a random w: dL/dloss = w, not 1, so the backward must multiply by g
  LEARN_CHECK(gradient_close(gradients(mine, {in.logits}, in.weight)[0], gradients(theirs, {in.logits}, in.weight)[0],
                             "dL/dlogits" + in.of() + " (L = w · loss, w = " + num(in.weight.item()) + ")",
                             "tapegrad's"));
}
