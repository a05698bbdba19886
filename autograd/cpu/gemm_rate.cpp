// gemm_rate.cpp — measure_gemm_flops_per_second.
#include "gemm_rate.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstddef>

#include "../errors.hpp"
#include "../generator.hpp"
#include "../storage.hpp"
#include "blas.hpp"

namespace tapegrad {

std::string GemmShape::str() const { return std::to_string(M) + "x" + std::to_string(N) + "x" + std::to_string(K); }

GemmRate measure_gemm_flops_per_second(DType dtype, const GemmShape& s, double seconds) {
  if (s.M <= 0 || s.N <= 0 || s.K <= 0) throw ValueError("measure_gemm_flops_per_second: the shape must be positive, got " + s.str());
  return measure_gemm_flops_per_second(GemmCall{dtype, false, false, s.M, s.N, s.K}, seconds);
}

GemmRate measure_gemm_flops_per_second(const GemmCall& s, double seconds) {
  const DType dtype = s.dtype;
  if (s.M <= 0 || s.N <= 0 || s.K <= 0)
    throw ValueError("measure_gemm_flops_per_second: the shape must be positive, got " + s.str());
  if (!(seconds > 0)) throw ValueError("measure_gemm_flops_per_second: seconds must be positive");
  if (!is_floating(dtype)) throw_unsupported_dtype("measure_gemm_flops_per_second", dtype);
  // Its own generator: measuring leaves the default one (dropout, initialization) untouched.
  Generator gen(20240601);
  using clock = std::chrono::steady_clock;
  GemmRate rate;
  rate.threads = get_num_threads();
  double fastest = INFINITY, spent = 0;
  dispatch_floating(dtype, "measure_gemm_flops_per_second", [&]<typename T>() {
    // The operands in blocks of the tensor allocator's cache, as a step's tensors are (64-byte
    // aligned), A then B drawn from standard normals in order: the numbers randn gave them.
    // op(A) is (M, K): stored (K, M) when transposed; op(B) (K, N): stored (N, K).
    auto bytes = [](std::int64_t n) { return static_cast<std::size_t>(n) * sizeof(T); };
    Storage a_bytes(bytes(s.M * s.K)), b_bytes(bytes(s.K * s.N)), c_bytes(bytes(s.M * s.N));
    T* a = static_cast<T*>(a_bytes.data());
    T* b = static_cast<T*>(b_bytes.data());
    T* c = static_cast<T*>(c_bytes.data());
    for (std::int64_t i = 0; i < s.M * s.K; ++i) a[i] = static_cast<T>(gen.next_normal());
    for (std::int64_t i = 0; i < s.K * s.N; ++i) b[i] = static_cast<T>(gen.next_normal());
    const std::int64_t lda = s.trans_a ? s.M : s.K, ldb = s.trans_b ? s.K : s.N;
    auto product = [&] {  // C (M, N) = op(A) (M, K) · op(B) (K, N), the call of matmul and Linear
      blas::gemm<T>(s.trans_a, s.trans_b, s.M, s.N, s.K, T(1), a, lda, b, ldb, T(0), c, s.N);
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
