// The properties exercise 3 is graded on (tag [learn.03]): the backward of C = A·B gives
// gradients shaped like A and B, with the values of a hand case, of the numerical derivative,
// of tapegrad's own matmul and of PyTorch (reference.inc, made by make_reference.py), on
// hand-picked and random shapes; then part 2, the batched product with one B, whose dB sums
// over the batch.
#include "03_matmul_backward/exercise.hpp"
#include "grading/grading.hpp"

using learn::batched_matmul_op;
using learn::matmul_op;
using learn::grading::binary_gradients;
using learn::grading::binary_gradients_match;
using learn::grading::gradient_matches_numerical;
using learn::grading::leaf;
using learn::grading::matches_pytorch;
using learn::grading::tensors_close;
using tapegrad::DType;
using tapegrad::Shape;
using tapegrad::shape_str;
using tapegrad::Tensor;
using tapegrad::TensorList;

namespace {

#include "reference.inc"

Tensor leaf_of(const std::vector<double>& values, const Shape& shape) {
  return tapegrad::tensor(values, shape, DType::float64).requires_grad_();
}

// The op's backward called directly, as the engine calls it, with dC all ones: {dL/dA, dL/dB}.
TensorList backward_of(const Tensor& c) { return c.grad_fn()->apply(tapegrad::ones_like(c)); }

// "" when the backward's gradient number k has x's shape, else a sentence on why it must.
std::string shaped_like(const TensorList& grads, std::size_t k, const std::string& name, const Tensor& x,
                        const std::string& why) {
  if (grads.size() != 2)
    return "the backward returned " + std::to_string(grads.size()) + " gradients, it should return 2: {dL/dA, dL/dB}";
  if (!grads[k].defined()) return "dL/d" + name + " is missing: the backward returned an undefined tensor for it";
  if (grads[k].shape() == x.shape()) return "";
  return "dL/d" + name + " has shape " + shape_str(grads[k].shape()) + ", it should be " + shape_str(x.shape()) +
         ", " + name + "'s own: " + why;
}

// "with A [2, 3], B [3, 4]: <why>", or "" when why is "".
std::string with_shapes(const Tensor& a, const Tensor& b, const std::string& why) {
  return why.empty() ? "" : "with A " + shape_str(a.shape()) + ", B " + shape_str(b.shape()) + ": " + why;
}

// "" when op's gradients equal tapegrad's matmul's for L = Σ R ⊙ (A·B), R random.
std::string agrees_with_tapegrad(const learn::grading::BinaryOp& op, const Tensor& a, const Tensor& b,
                                 tapegrad::Generator& gen) {
  const Tensor r = tapegrad::randn(tapegrad::matmul(a, b).shape(), gen, DType::float64);
  return with_shapes(a, b, binary_gradients_match(op, a, b, r, binary_gradients(tapegrad::matmul, a, b, r),
                                                   "tapegrad's matmul's", {"A", "B"}));
}

// dims of a random shape: 1 to 5
Shape random_2d() { return {GENERATE(take(3, random(1, 5))), GENERATE(take(2, random(1, 5)))}; }

}  // namespace

TEST_CASE("the forward (given) is the matrix product: (2, 3)·(3, 4) is (2, 4)", "[learn.03]") {
  tapegrad::Generator gen(3);
  const Tensor a = leaf({2, 3}, gen), b = leaf({3, 4}, gen);
  LEARN_CHECK(tensors_close("A·B", matmul_op(a, b), tapegrad::matmul_naive(a, b), "the triple loop's product"));
}

TEST_CASE("dL/dA has A's shape (m, k) and dL/dB has B's shape (k, n), for A (2, 3) and B (3, 4)", "[learn.03]") {
  tapegrad::Generator gen(4);
  const Tensor a = leaf({2, 3}, gen), b = leaf({3, 4}, gen);
  const TensorList grads = backward_of(matmul_op(a, b));
  LEARN_CHECK(shaped_like(grads, 0, "A", a, "each entry of A gets one derivative, so dC (2, 4) times Bᵀ (4, 3)"));
  LEARN_CHECK(shaped_like(grads, 1, "B", b, "each entry of B gets one derivative, so Aᵀ (3, 2) times dC (2, 4)"));
}

TEST_CASE("with dC all ones (L = sum of C), dL/dA[i, p] is row p of B summed, dL/dB[p, j] column p of A summed",
          "[learn.03]") {
  const Tensor a = leaf_of({1, 2, 3, 4, 5, 6}, {2, 3}), b = leaf_of({1, 0, 0, 1, 1, 1}, {3, 2});
  tapegrad::sum(matmul_op(a, b)).backward();
  const std::string with = " of sum(A·B), A = [[1, 2, 3], [4, 5, 6]], B = [[1, 0], [0, 1], [1, 1]]";
  LEARN_CHECK(tensors_close("dL/dA" + with, a.grad(), tapegrad::tensor({1, 1, 2, 1, 1, 2}, {2, 3}, DType::float64),
                            "B's row sums [1, 1, 2] in each row"));
  LEARN_CHECK(tensors_close("dL/dB" + with, b.grad(), tapegrad::tensor({5, 5, 7, 7, 9, 9}, {3, 2}, DType::float64),
                            "A's column sums [5, 7, 9] down each column"));
}

TEST_CASE("the gradients match the numerical derivative, A (m, k) and B (k, n) of random sizes 1 to 5", "[learn.03]") {
  const Shape mk = random_2d();
  const std::int64_t n = GENERATE(take(2, random(1, 5)));
  tapegrad::Generator gen(static_cast<std::uint64_t>(mk[0] * 100 + mk[1] * 10 + n));
  const Tensor a = leaf(mk, gen), b = leaf({mk[1], n}, gen);
  LEARN_CHECK(with_shapes(a, b, gradient_matches_numerical([](const TensorList& in) { return matmul_op(in[0], in[1]); },
                                                          {a, b}, {"A", "B"})));
}

TEST_CASE("the gradients equal tapegrad's own matmul's, on random shapes", "[learn.03]") {
  const Shape mk = random_2d();
  const std::int64_t n = GENERATE(take(2, random(1, 5)));
  tapegrad::Generator gen(static_cast<std::uint64_t>(7 + mk[0] * 100 + mk[1] * 10 + n));
  LEARN_CHECK(agrees_with_tapegrad(matmul_op, leaf(mk, gen), leaf({mk[1], n}, gen), gen));
}

TEST_CASE("the gradients equal PyTorch's: A (3, 4), B (4, 2), L = sum(R * (A·B))", "[learn.03]") {
  LEARN_CHECK(matches_pytorch(matmul_op, plain, {"A", "B"}));
}

// ---- part 2: a batch of A's times one B

TEST_CASE("part 2: dL/dA has A's shape (batch, m, k) and dL/dB has B's shape (k, n), for A (4, 2, 3), B (3, 5)",
          "[learn.03]") {
  tapegrad::Generator gen(5);
  const Tensor a = leaf({4, 2, 3}, gen), b = leaf({3, 5}, gen);
  const TensorList grads = backward_of(batched_matmul_op(a, b));
  LEARN_CHECK(shaped_like(grads, 0, "A", a, "each batch element's A[i] gets its own dC[i]·Bᵀ"));
  LEARN_CHECK(shaped_like(grads, 1, "B", b, "there is one B, used by the whole batch, so one gradient summed over the batch"));
}

TEST_CASE("part 2: dL/dB sums over the batch: with the same A in 3 batch elements, dL/dB is 3 times one element's",
          "[learn.03]") {
  tapegrad::Generator gen(6);
  const Tensor one = tapegrad::randn({2, 3}, gen, DType::float64), r = tapegrad::randn({2, 4}, gen, DType::float64);
  const Tensor a = tapegrad::stack({one, one, one}).requires_grad_(), b = leaf({3, 4}, gen);
  tapegrad::sum(tapegrad::mul(batched_matmul_op(a, b), tapegrad::stack({r, r, r}))).backward();
  const Tensor single = tapegrad::matmul(one.transpose(0, 1), r);  // one element's Aᵀ·dC
  const bool one_element_only = b.grad().defined() && b.grad().shape() == single.shape() &&
                                tensors_close("dL/dB", b.grad(), single, "").empty();
  LEARN_CHECK(one_element_only ? "dL/dB is one batch element's Aᵀ·dC: B is shared by all 3 elements, so it must "
                                 "receive the sum of the 3 (the += of fan-out, exercise 2)"
                               : tensors_close("dL/dB", b.grad(), single * 3.0, "3 times one element's Aᵀ·dC"));
}

TEST_CASE("part 2: the gradients match the numerical derivative, A (batch, m, k) and B (k, n) of random sizes",
          "[learn.03]") {
  const std::int64_t batch = GENERATE(1, 3);
  const Shape mk = random_2d();
  const std::int64_t n = GENERATE(take(1, random(1, 5)));
  tapegrad::Generator gen(static_cast<std::uint64_t>(batch * 1000 + mk[0] * 100 + mk[1] * 10 + n));
  const Tensor a = leaf({batch, mk[0], mk[1]}, gen), b = leaf({mk[1], n}, gen);
  LEARN_CHECK(with_shapes(a, b, gradient_matches_numerical(
                                    [](const TensorList& in) { return batched_matmul_op(in[0], in[1]); }, {a, b},
                                    {"A", "B"})));
}

TEST_CASE("part 2: the gradients equal tapegrad's matmul's of (batch, m, k) by (k, n), on random shapes",
          "[learn.03]") {
  const std::int64_t batch = GENERATE(take(2, random(1, 6)));
  const Shape mk = random_2d();
  tapegrad::Generator gen(static_cast<std::uint64_t>(11 + batch * 100 + mk[0] * 10 + mk[1]));
  LEARN_CHECK(agrees_with_tapegrad(batched_matmul_op, leaf({batch, mk[0], mk[1]}, gen), leaf({mk[1], 3}, gen), gen));
}

TEST_CASE("part 2: the gradients equal PyTorch's: A (2, 3, 4), B (4, 5), L = sum(R * (A·B))", "[learn.03]") {
  LEARN_CHECK(matches_pytorch(batched_matmul_op, batched, {"A", "B"}));
}
