// gemm_census.cpp — the census's counting and its guard.
#include "gemm_census.hpp"

#include "../errors.hpp"

namespace tapegrad {

namespace detail {
std::atomic<GemmCensus*> active_census{nullptr};
namespace {
std::mutex census_lock;
}
void count_gemm(const GemmCall& call, double seconds) {
  std::lock_guard<std::mutex> lock(census_lock);
  if (GemmCensus* c = active_census.load()) {
    ++c->calls[call];
    c->seconds[call] += seconds;
  }
}
}  // namespace detail

std::string GemmCall::str() const {
  return std::string(dtype_name(dtype)) + " " + (trans_a ? "T" : "N") + (trans_b ? "T" : "N") + " " +
         std::to_string(M) + "x" + std::to_string(N) + "x" + std::to_string(K);
}

double GemmCensus::total_flops() const {
  double sum = 0;
  for (const auto& [call, count] : calls) sum += call.flops() * double(count);
  return sum;
}

std::int64_t GemmCensus::total_calls() const {
  std::int64_t sum = 0;
  for (const auto& [call, count] : calls) sum += count;
  return sum;
}

GemmCensusGuard::GemmCensusGuard(GemmCensus& census) {
  GemmCensus* expected = nullptr;
  if (!detail::active_census.compare_exchange_strong(expected, &census))
    throw ValueError("GemmCensusGuard: a census is already being taken");
}

GemmCensusGuard::~GemmCensusGuard() {
  std::lock_guard<std::mutex> lock(detail::census_lock);
  detail::active_census.store(nullptr);
}

}  // namespace tapegrad
