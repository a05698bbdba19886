// random.cpp — SplitMix64 and the tensor fills built on it.
#include "random.hpp"

#include <cmath>
#include <numbers>

#include "shape.hpp"

namespace tapegrad {

void Generator::manual_seed(std::uint64_t seed) { state_ = GeneratorState{seed, false, 0.0}; }

std::uint64_t Generator::next_u64() {
  // SplitMix64: add a Weyl-sequence constant (2^64 / golden ratio), then mix the bits.
  std::uint64_t z = (state_.state += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

double Generator::next_double() { return static_cast<double>(next_u64() >> 11) * 0x1.0p-53; }

double Generator::next_normal() {
  if (state_.has_spare_normal) {
    state_.has_spare_normal = false;
    return state_.spare_normal;
  }
  // Box-Muller: u1 in (0, 1] keeps log(u1) finite.
  const double u1 = 1.0 - next_double(), u2 = next_double();
  const double r = std::sqrt(-2.0 * std::log(u1)), theta = 2.0 * std::numbers::pi * u2;
  state_.has_spare_normal = true;
  state_.spare_normal = r * std::sin(theta);
  return r * std::cos(theta);
}

std::uint64_t Generator::next_below(std::uint64_t n) {
  if (n == 0) throw ValueError("next_below: n must be positive");
  // Reject the top partial block so every residue is equally likely.
  const std::uint64_t limit = UINT64_MAX - UINT64_MAX % n;
  std::uint64_t x;
  do x = next_u64();
  while (x >= limit);
  return x % n;
}

Generator& default_generator() {
  static Generator gen(0);
  return gen;
}

void manual_seed(std::uint64_t seed) { default_generator().manual_seed(seed); }

namespace {
// Fills sequentially so results do not depend on the thread count.
template <typename Draw>
void fill_with(Tensor& t, const char* op, Draw draw) {
  dispatch_floating(t.dtype(), op, [&]<typename T>() {
    T* p = t.data<T>();
    for_each_strided(t.shape(), t.strides(),
                     [&](std::int64_t, std::int64_t off) { p[off] = static_cast<T>(draw()); });
  });
}
}  // namespace

void uniform_(Tensor& t, double low, double high, Generator& gen) {
  if (!(low <= high)) throw ValueError("uniform_: expected low <= high");
  fill_with(t, "uniform_", [&] { return low + (high - low) * gen.next_double(); });
}

void normal_(Tensor& t, double mean, double std, Generator& gen) {
  if (!(std >= 0)) throw ValueError("normal_: std must be >= 0, got " + std::to_string(std));
  fill_with(t, "normal_", [&] { return mean + std * gen.next_normal(); });
}

Tensor rand(const Shape& shape, Generator& gen, DType dtype) {
  Tensor t = Tensor::empty(shape, dtype);
  uniform_(t, 0.0, 1.0, gen);
  return t;
}
Tensor rand(const Shape& shape, DType dtype) { return rand(shape, default_generator(), dtype); }

Tensor randn(const Shape& shape, Generator& gen, DType dtype) {
  Tensor t = Tensor::empty(shape, dtype);
  normal_(t, 0.0, 1.0, gen);
  return t;
}
Tensor randn(const Shape& shape, DType dtype) { return randn(shape, default_generator(), dtype); }

Tensor randint(std::int64_t low, std::int64_t high, const Shape& shape, Generator& gen) {
  if (low >= high)
    throw ValueError("randint: expected low < high, got " + std::to_string(low) + " and " +
                     std::to_string(high));
  Tensor t = Tensor::empty(shape, DType::int64);
  std::int64_t* p = t.data<std::int64_t>();
  const auto range = static_cast<std::uint64_t>(high - low);
  for (std::int64_t i = 0; i < t.numel(); ++i)
    p[i] = low + static_cast<std::int64_t>(gen.next_below(range));
  return t;
}

}  // namespace tapegrad
