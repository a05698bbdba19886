// The properties exercise 7 is graded on (tag [learn.07]): the forward (given) and dβ, dγ, dx
// against PyTorch's, each row of dx summing to 0, the three gradients against central
// differences on random shapes, and agreement with tapegrad's layer_norm.
#include "07_layer_norm/exercise.hpp"
#include "grading/grading.hpp"

using namespace tapegrad;
using namespace learn::grading;  // the sentences: tensors_close, gradient_matches_numerical, ...

namespace reference {
#include "reference.inc"
}

namespace {

// The reference's inputs, and what the forward saves for the backward: x̂ and rstd.
struct Example {
  Tensor x = float64(reference::x, reference::x_shape), gamma = float64(reference::gamma, reference::gamma_shape),
         beta = float64(reference::beta, reference::beta_shape), g = float64(reference::g, reference::g_shape);
  Tensor xhat, rstd;
  Example() {
    const Tensor centered = x - mean(x, {-1}, true);
    rstd = rsqrt(mean(centered * centered, {-1}, true) + 1e-5);
    xhat = centered * rstd;
  }
};

// Random float64 leaves x (shape), γ and β (its last dim), and weights R for L = Σ R ⊙ y.
struct Inputs {
  Shape shape;
  Generator gen;
  Tensor x, gamma, beta, weights;
  Inputs(Shape shape_, std::uint64_t seed) : shape(std::move(shape_)), gen(seed) {
    x = learn::grading::leaf(shape, gen);
    gamma = learn::grading::leaf({shape.back()}, gen);
    beta = learn::grading::leaf({shape.back()}, gen);
    weights = randn(shape, gen, DType::float64);
  }
};

Shape random_shape() { return GENERATE(values<Shape>({{6}, {3, 4}, {2, 3, 5}, {5, 1}, {1, 8}})); }

const auto mine = [](const TensorList& in) { return learn::layer_norm(in[0], in[1], in[2]); };
const auto theirs = [](const TensorList& in) {
  return tapegrad::layer_norm(in[0], {in[0].shape().back()}, in[1], in[2]);
};

}  // namespace

TEST_CASE("the forward (given) matches PyTorch's layer_norm", "[learn.07]") {
  const Example e;
  LEARN_CHECK(tensors_close("layer_norm(x, γ, β)", learn::layer_norm(e.x, e.gamma, e.beta),
                            float64(reference::y, reference::y_shape), "PyTorch's"));
}

TEST_CASE("dL/dβ is g summed over every row, as PyTorch's (x of shape (2, 3, 5))", "[learn.07]") {
  const Example e;
  LEARN_CHECK(tensors_close("dL/dβ", learn::layer_norm_dbeta(e.g), float64(reference::dbeta, reference::dbeta_shape),
                            "PyTorch's"));
}

TEST_CASE("dL/dγ is g ⊙ x̂ summed over every row, as PyTorch's (x of shape (2, 3, 5))", "[learn.07]") {
  const Example e;
  LEARN_CHECK(tensors_close("dL/dγ", learn::layer_norm_dgamma(e.g, e.xhat),
                            float64(reference::dgamma, reference::dgamma_shape), "PyTorch's"));
}

TEST_CASE("dL/dx matches PyTorch's (x of shape (2, 3, 5), one row far from 0)", "[learn.07]") {
  const Example e;
  LEARN_CHECK(tensors_close("dL/dx", learn::layer_norm_dx(e.g, e.xhat, e.rstd, e.gamma),
                            float64(reference::dx, reference::dx_shape), "PyTorch's", 1e-8, 1e-10));
}

TEST_CASE("each row of dL/dx sums to 0: shifting a row changes nothing (random shapes)", "[learn.07]") {
  const Inputs in(random_shape(), GENERATE(take(2, random(1, 1000))));
  const Shape& shape = in.shape;
  const Tensor &x = in.x, &gamma = in.gamma, &beta = in.beta;
  const Tensor dx = gradients(mine, {x, gamma, beta}, in.weights)[0];
  const std::string wrong = tensors_close("the sum of each row of dL/dx, x of shape " + shape_str(shape), sum(dx, {-1}),
                                          zeros(Shape(shape.begin(), shape.end() - 1), DType::float64), "0", 0, 1e-9);
  LEARN_CHECK(wrong.empty() ? ""
                            : wrong + ". Adding the same number to every x of a row moves μ by that number and "
                                      "leaves x̂, so y and L, unchanged: the gradient can have no part along "
                                      "(1, ..., 1). The - mean(ĝ) term is what removes it");
}

TEST_CASE("the three gradients match the numerical derivative (random shapes)", "[learn.07]") {
  const Inputs in(random_shape(), GENERATE(take(2, random(1, 1000))));
  const Shape& shape = in.shape;
  const Tensor &x = in.x, &gamma = in.gamma, &beta = in.beta;
  const std::string of = ", x of shape " + shape_str(shape);
  LEARN_CHECK(gradient_matches_numerical(mine, {x, gamma, beta}, {"x" + of, "γ" + of, "β" + of}));
}

TEST_CASE("values and gradients agree with tapegrad's layer_norm (random shapes)", "[learn.07]") {
  const Inputs in(random_shape(), GENERATE(take(2, random(1, 1000))));
  const Shape& shape = in.shape;
  const Tensor &x = in.x, &gamma = in.gamma, &beta = in.beta;
  const std::string of = ", x of shape " + shape_str(shape);
  LEARN_CHECK(tensors_close("layer_norm(x, γ, β)" + of, mine({x, gamma, beta}), theirs({x, gamma, beta}),
                            "tapegrad's layer_norm"));
  const TensorList got = gradients(mine, {x, gamma, beta}, in.weights),
                   want = gradients(theirs, {x, gamma, beta}, in.weights);
  const char* names[] = {"dL/dx", "dL/dγ", "dL/dβ"};
  for (std::size_t k = 0; k < 3; ++k)
    LEARN_CHECK(tensors_close(names[k] + of, got[k], want[k], "tapegrad's", 1e-8, 1e-10));
}
