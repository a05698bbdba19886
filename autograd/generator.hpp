// generator.hpp — the seeded random Generator, without Tensor: what a raw-pointer kernel needs
// to draw numbers (autograd/cpu/: the attention's dropout mask, the GEMM rate's matrices).
// The tensor fills built on it (rand, randn, normal_, ...) are in random.hpp.
//
// The generator is SplitMix64 (Steele, Lea & Flood, "Fast splittable pseudorandom number
// generators", 2014): one 64-bit state, so it is trivial to save in a checkpoint and
// restore exactly. Normals use the Box-Muller transform. Not thread-safe: give each thread
// its own Generator.
#pragma once

#include <cstdint>

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

}  // namespace tapegrad
