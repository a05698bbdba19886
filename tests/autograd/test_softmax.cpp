// test_softmax.cpp — softmax and log_softmax: gradcheck on every dim, the fused kernels
// against their composition from primitive ops, PyTorch references (also for gelu and erf), stability
// with huge logits, and error messages.
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include "support/gradcheck_catch.hpp"
#include "support/reference.hpp"

using namespace tapegrad;
using tapegrad::testing::ops_reference;
using tapegrad::testing::param;

namespace {

// The textbook compositions the fused kernels replace.
Tensor composed_softmax(const Tensor& x, std::int64_t dim) {
  const Tensor e = exp(sub(x, max(x, dim, true)));
  return div(e, sum(e, {dim}, true));
}

Tensor composed_log_softmax(const Tensor& x, std::int64_t dim) {
  const Tensor shifted = sub(x, max(x, dim, true));
  return sub(shifted, log(sum(exp(shifted), {dim}, true)));
}

// The gradient that reaches x when y = fn(x) receives the upstream gradient dout.
Tensor input_grad(const std::function<Tensor(const Tensor&)>& fn, const Tensor& x_values,
                  const Tensor& dout) {
  Tensor x = x_values.detach().clone().requires_grad_();
  fn(x).backward(dout);
  return x.grad();
}

}  // namespace

TEST_CASE("softmax and log_softmax pass gradcheck on every dim", "[softmax]") {
  const Tensor x = param({2, 3, 4}, 1);
  for (std::int64_t dim = -3; dim < 3; ++dim) {
    INFO("dim " << dim);
    CHECK_GRADCHECK([dim](const TensorList& in) { return softmax(in[0], dim); }, {x});
    CHECK_GRADCHECK([dim](const TensorList& in) { return log_softmax(in[0], dim); }, {x});
  }
  SECTION("edge shapes: 1-d, a size-1 softmax dim, 0-d, non-contiguous input") {
    CHECK_GRADCHECK([](const TensorList& in) { return softmax(in[0], 0); }, {param({5}, 2)});
    CHECK_GRADCHECK([](const TensorList& in) { return log_softmax(in[0], 1); }, {param({3, 1, 2}, 3)});
    CHECK_GRADCHECK([](const TensorList& in) { return softmax(in[0], 0); }, {param({}, 4)});
    CHECK_GRADCHECK([](const TensorList& in) { return softmax(in[0].transpose(0, 1), -1); }, {param({4, 3}, 5)});
    CHECK_GRADCHECK([](const TensorList& in) { return log_softmax(in[0].transpose(0, 1), 0); }, {param({4, 3}, 6)});
  }
}

TEST_CASE("fused softmax and log_softmax match their composition, forward and backward", "[softmax]") {
  // The large shape takes the OpenMP path (more than kParallelGrain elements).
  for (const Shape& shape : {Shape{2, 3, 4}, Shape{64, 2, 600}}) {
    Generator gen(7);
    const Tensor x = randn(shape, gen, DType::float64);
    const Tensor dout = randn(shape, gen, DType::float64);
    for (std::int64_t dim = 0; dim < 3; ++dim) {
      INFO("shape " << shape_str(shape) << ", dim " << dim);
      CHECK_CLOSE("softmax", softmax(x, dim), composed_softmax(x, dim), 1e-14, 1e-12);
      CHECK_CLOSE("log_softmax", log_softmax(x, dim), composed_log_softmax(x, dim), 1e-13, 1e-12);
      CHECK_CLOSE("softmax dx", input_grad([dim](const Tensor& t) { return softmax(t, dim); }, x, dout),
                  input_grad([dim](const Tensor& t) { return composed_softmax(t, dim); }, x, dout), 1e-13, 1e-12);
      CHECK_CLOSE("log_softmax dx",
                  input_grad([dim](const Tensor& t) { return log_softmax(t, dim); }, x, dout),
                  input_grad([dim](const Tensor& t) { return composed_log_softmax(t, dim); }, x, dout),
                  1e-12, 1e-12);
    }
  }
}

TEST_CASE("softmax and log_softmax match PyTorch", "[softmax][reference]") {
  const auto& ref = ops_reference();
  for (const char* op : {"softmax", "log_softmax"})
    for (const char* which : {"last", "dim1", "dim0"}) {
      const std::string p = std::string(op) + "." + which + ".";
      const std::int64_t dim = ref.integer(p + "dim");
      auto fn = [&](const Tensor& x) { return std::string(op) == "softmax" ? softmax(x, dim) : log_softmax(x, dim); };
      for (DType dtype : {DType::float64, DType::float32}) {
        // float64 agrees to rounding; float32 to its 7 digits
        const double tol = dtype == DType::float64 ? 1e-12 : 1e-5;
        INFO(p << " in " << dtype_name(dtype));
        const Tensor x = ref.get(p + "x", dtype), dout = ref.get(p + "dout", dtype);
        CHECK_CLOSE(p + "y", fn(x), ref.get(p + "y"), tol, tol);
        const Tensor dx = input_grad(fn, x, dout);
        CHECK(dx.dtype() == dtype);
        CHECK_CLOSE(p + "dx", dx, ref.get(p + "dx"), tol, tol);
      }
    }
}

TEST_CASE("gelu (exact and tanh) matches PyTorch", "[gelu][reference]") {
  const auto& ref = ops_reference();
  for (const std::string approximate : {"none", "tanh"}) {
    const std::string p = "gelu_" + approximate + ".";
    auto fn = [&](const Tensor& x) { return gelu(x, approximate); };
    for (DType dtype : {DType::float64, DType::float32}) {
      const double tol = dtype == DType::float64 ? 1e-12 : 1e-5;
      INFO(p << " in " << dtype_name(dtype));
      const Tensor x = ref.get(p + "x", dtype), dout = ref.get(p + "dout", dtype);
      CHECK_CLOSE(p + "y", fn(x), ref.get(p + "y"), tol, tol);
      CHECK_CLOSE(p + "dx", input_grad(fn, x, dout), ref.get(p + "dx"), tol, tol);
    }
  }
}

TEST_CASE("erf matches PyTorch: values and gradient", "[erf][reference]") {
  const auto& ref = ops_reference();
  for (DType dtype : {DType::float64, DType::float32}) {
    const double tol = dtype == DType::float64 ? 1e-12 : 1e-5;
    INFO("erf in " << dtype_name(dtype));
    const Tensor x = ref.get("erf.x", dtype), dout = ref.get("erf.dout", dtype);
    CHECK_CLOSE("erf.y", erf(x), ref.get("erf.y"), tol, tol);
    CHECK_CLOSE("erf.dx", input_grad([](const Tensor& t) { return erf(t); }, x, dout), ref.get("erf.dx"), tol, tol);
  }
}

TEST_CASE("softmax is stable for logits of 1e4", "[softmax]") {
  for (DType dtype : {DType::float64, DType::float32}) {
    INFO(dtype_name(dtype));
    const Tensor x = tensor({1e4, 1e4 - 1, -1e4, 1e4 - 2}, {1, 4}, dtype).requires_grad_();
    // exp(1e4) overflows: the naive formula gives NaN, which the max shift avoids.
    const Tensor naive = div(exp(x), sum(exp(x), {1}, true));
    CHECK(std::isnan(naive.to_vector()[0]));

    const Tensor y = softmax(x, 1), logy = log_softmax(x, 1);
    const double z = 1 + std::exp(-1.0) + std::exp(-2.0);  // Σ exp(x - max)
    const std::vector<double> expected{1 / z, std::exp(-1.0) / z, 0, std::exp(-2.0) / z};
    const std::vector<double> got = y.to_vector(), got_log = logy.to_vector();
    for (std::size_t i = 0; i < expected.size(); ++i) {
      CHECK(got[i] == Approx(expected[i]).margin(1e-6));
      CHECK(std::isfinite(got_log[i]));
    }
    CHECK(got_log[0] == Approx(-std::log(z)).margin(1e-5));
    CHECK(got_log[2] == Approx(-2e4 - std::log(z)).epsilon(1e-6));
    (y * tensor({1, 2, 3, 4}, {1, 4}, dtype)).sum().backward();
    for (double g : x.grad().to_vector()) CHECK(std::isfinite(g));
  }
}

TEST_CASE("softmax rejects bad dims and dtypes", "[softmax][errors]") {
  const Tensor x = zeros({2, 3});
  REQUIRE_THROWS_AS(softmax(x, 2), ShapeError);
  REQUIRE_THROWS_WITH(softmax(x, 2), Catch::Contains("softmax: dim 2 is out of range for a 2-d tensor"));
  REQUIRE_THROWS_WITH(log_softmax(x, -3), Catch::Contains("log_softmax: dim -3 is out of range"));
  const Tensor ints = tensor({1, 2}, {2}, DType::int64);
  REQUIRE_THROWS_AS(softmax(ints, 0), DTypeError);
  REQUIRE_THROWS_WITH(log_softmax(ints, 0), Catch::Contains("log_softmax") && Catch::Contains("int64"));
}

TEST_CASE("the reference loader names the file and the missing key", "[reference]") {
  using tapegrad::testing::ReferenceFile;
  const auto& ref = ops_reference();
  REQUIRE_THROWS_WITH(ref.get("softmax.no_such_case.x"),
                      Catch::Contains("ops_reference.txt: no tensor named \"softmax.no_such_case.x\"") &&
                          Catch::Contains("regenerate with: /usr/bin/python3 tests/reference/make_reference.py"));
  REQUIRE_THROWS_WITH(ReferenceFile("no/such/reference.txt"),
                      Catch::Contains("reference file no/such/reference.txt: cannot open the file"));
  // A truncated file: a tensor header without its values line.
  const std::string path =
      (std::filesystem::temp_directory_path() / "tapegrad_bad_reference_test.txt").string();
  {
    std::ofstream out(path);
    out << "tapegrad-reference 1\nx float64 1 3\n";
  }
  REQUIRE_THROWS_WITH(ReferenceFile(path), Catch::Contains("the values of \"x\" are missing"));
  {
    std::ofstream out(path);
    out << "tapegrad-reference 1\nx float64 1 3\n1.5 nan\n";
  }
  REQUIRE_THROWS_WITH(ReferenceFile(path), Catch::Contains("\"x\" of shape [3] needs 3 values, found 2"));
  std::remove(path.c_str());
}
