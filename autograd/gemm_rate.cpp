// gemm_rate.cpp — measure_gemm_flops_per_second.
#include "gemm_rate.hpp"

#include <chrono>
#include <cmath>

#include "blas.hpp"
#include "errors.hpp"
#include "random.hpp"
#include "tensor.hpp"

namespace tapegrad {

std::string GemmShape::str() const { return std::to_string(M) + "x" + std::to_string(N) + "x" + std::to_string(K); }

GemmRate measure_gemm_flops_per_second(DType dtype, const GemmShape& s, double seconds) {
  if (s.M <= 0 || s.N <= 0 || s.K <= 0) throw ValueError("measure_gemm_flops_per_second: the shape must be positive, got " + s.str());
  if (!(seconds > 0)) throw ValueError("measure_gemm_flops_per_second: seconds must be positive");
  if (!is_floating(dtype)) throw_unsupported_dtype("measure_gemm_flops_per_second", dtype);
  // Its own generator: measuring leaves the default one (dropout, initialization) untouched.
  Generator gen(20240601);
  const Tensor a = randn({s.M, s.K}, gen, dtype), b = randn({s.K, s.N}, gen, dtype);
  Tensor c = Tensor::empty({s.M, s.N}, dtype);
  using clock = std::chrono::steady_clock;
  GemmRate rate;
  rate.threads = get_num_threads();
  double fastest = INFINITY, spent = 0;
  dispatch_floating(dtype, "measure_gemm_flops_per_second", [&]<typename T>() {
    auto product = [&] {  // C (M, N) = A (M, K) · B (K, N), the call of matmul and Linear
      blas::gemm<T>(false, false, s.M, s.N, s.K, T(1), a.data<T>(), s.K, b.data<T>(), s.N, T(0), c.data<T>(), s.N);
    };
    product();  // untimed: first-touch pages, thread start-up
    while (rate.repetitions < 3 || spent < seconds) {
      const auto start = clock::now();
      product();
      const double t = std::chrono::duration<double>(clock::now() - start).count();
      fastest = std::min(fastest, t);
      spent += t;
      ++rate.repetitions;
    }
  });
  rate.flops_per_second = 2.0 * double(s.M) * double(s.N) * double(s.K) / std::max(fastest, 1e-12);
  return rate;
}

}  // namespace tapegrad
