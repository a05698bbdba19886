// random.hpp — seeded random numbers: a Generator, the global default one (generator.hpp,
// which has no Tensor, for the kernels), and the tensor fills rand/randn built on it.
#pragma once

#include <cstdint>

#include "generator.hpp"
#include "tensor.hpp"

namespace tapegrad {

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
