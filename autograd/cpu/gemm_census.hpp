// gemm_census.hpp — which matrix products a piece of code runs: every blas::gemm call while a
// census is taken, counted by shape and timed. With a rate measured on each shape alone
// (gemm_rate.hpp) it gives the "GEMM floor" of a training step: the time the step would take
// if it did nothing but its products, each at the speed BLAS reaches on that shape. The
// seconds the calls took inside the step, beside that, tell how much slower a product runs
// among the step's other work (its operands evicted, its output cold) than alone and hot.
//
//   GemmCensus census;
//   { GemmCensusGuard taking(census); train_step(); }
//   for (const auto& [call, count] : census.calls) ...   // {float32, NT, 512x128x512}: 24
//   census.seconds.at(call)                               // those 24 calls' time in the step
//
// Calls from every thread are counted (attention runs its per-head products inside an
// OpenMP loop), under a lock, and their times summed over the threads; with no census active
// the cost is one atomic load per call.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <tuple>

#include "../dtype.hpp"

namespace tapegrad {

struct GemmCall {
  DType dtype = DType::float32;
  bool trans_a = false, trans_b = false;
  std::int64_t M = 0, N = 0, K = 0;  // C (M, N) = op(A) (M, K) · op(B) (K, N)
  double flops() const { return 2.0 * double(M) * double(N) * double(K); }
  std::string str() const;  // "float32 NT 512x128x512"
  auto key() const { return std::tie(dtype, trans_a, trans_b, M, N, K); }
  bool operator<(const GemmCall& o) const { return key() < o.key(); }
};

struct GemmCensus {
  std::map<GemmCall, std::int64_t> calls;  // shape -> number of calls
  std::map<GemmCall, double> seconds;      // shape -> their time, summed over the calling threads
  double total_flops() const;
  std::int64_t total_calls() const;
};

// Takes a census into `census` while it lives (one at a time; they do not nest).
class GemmCensusGuard {
 public:
  explicit GemmCensusGuard(GemmCensus& census);
  ~GemmCensusGuard();
  GemmCensusGuard(const GemmCensusGuard&) = delete;
  GemmCensusGuard& operator=(const GemmCensusGuard&) = delete;
};

namespace detail {
extern std::atomic<GemmCensus*> active_census;
void count_gemm(const GemmCall& call, double seconds);  // under the census lock
}  // namespace detail

// Counts and times one blas::gemm call while it lives, when a census is being taken.
class GemmCensusEntry {
 public:
  GemmCensusEntry(DType dtype, bool trans_a, bool trans_b, std::int64_t M, std::int64_t N, std::int64_t K)
      : taking_(detail::active_census.load(std::memory_order_relaxed) != nullptr) {
    if (taking_) call_ = {dtype, trans_a, trans_b, M, N, K}, start_ = std::chrono::steady_clock::now();
  }
  ~GemmCensusEntry() {
    if (taking_)
      detail::count_gemm(call_, std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count());
  }
  GemmCensusEntry(const GemmCensusEntry&) = delete;
  GemmCensusEntry& operator=(const GemmCensusEntry&) = delete;

 private:
  bool taking_;
  GemmCall call_;
  std::chrono::steady_clock::time_point start_;
};

}  // namespace tapegrad
