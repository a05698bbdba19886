// random.hpp — seeded random numbers: a Generator, the global default one, and rand/randn.
//
// The generator is SplitMix64 (Steele, Lea & Flood, "Fast splittable pseudorandom number
// generators", 2014): one 64-bit state, so it is trivial to save in a checkpoint and
// restore exactly. Normals use the Box-Muller transform. Not thread-safe: give each thread
// its own Generator.
#pragma once

#include <cstdint>

#include "tensor.hpp"

namespace tapegrad {

struct GeneratorState {
  std::uint64_t state = 0;
  bool has_spare_normal = false;  // Box-Muller makes normals in pairs; the second waits here
  double spare_normal = 0.0;
};

class Generator {
 public:
  explicit Generator(std::uint64_t seed = 0) { manual_seed(seed); }
  void manual_seed(std::uint64_t seed);
  std::uint64_t next_u64();
  double next_double();  // uniform in [0, 1), 53 random bits
  double next_normal();  // standard normal
  // Uniform integer in [0, n), without modulo bias.
  std::uint64_t next_below(std::uint64_t n);

  GeneratorState get_state() const { return state_; }
  void set_state(const GeneratorState& state) { state_ = state; }

 private:
  GeneratorState state_;
};

// The generator used when none is passed.
Generator& default_generator();
// Seeds the default generator (as torch.manual_seed).
void manual_seed(std::uint64_t seed);

// Uniform in [0, 1).
Tensor rand(const Shape& shape, Generator& gen, DType dtype = DType::float32);
Tensor rand(const Shape& shape, DType dtype = DType::float32);
// Standard normal.
Tensor randn(const Shape& shape, Generator& gen, DType dtype = DType::float32);
Tensor randn(const Shape& shape, DType dtype = DType::float32);
// Uniform integers in [low, high), int64.
Tensor randint(std::int64_t low, std::int64_t high, const Shape& shape, Generator& gen);

// In-place fills (not recorded), used by nn initializers.
void uniform_(Tensor& t, double low, double high, Generator& gen);
void normal_(Tensor& t, double mean, double std, Generator& gen);

}  // namespace tapegrad
