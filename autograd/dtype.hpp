// dtype.hpp — the runtime element types a Tensor can hold, and a helper that turns a
// runtime dtype into a compile-time scalar type for a kernel.
//
// float32 is the default (training), float64 exists for exact gradient checks, int64 holds
// indices and class targets (never differentiable). bfloat16 has a reserved slot; every
// dispatch below rejects it with a clear error until kernels exist for it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace tapegrad {

enum class DType : std::uint8_t { float32 = 0, float64 = 1, int64 = 2, bfloat16 = 3 };

constexpr std::size_t size_of(DType dtype) {
  switch (dtype) {
    case DType::float32: return 4;
    case DType::float64: return 8;
    case DType::int64: return 8;
    case DType::bfloat16: return 2;
  }
  return 0;
}

constexpr const char* dtype_name(DType dtype) {
  switch (dtype) {
    case DType::float32: return "float32";
    case DType::float64: return "float64";
    case DType::int64: return "int64";
    case DType::bfloat16: return "bfloat16";
  }
  return "unknown";
}

constexpr bool is_floating(DType dtype) {
  return dtype == DType::float32 || dtype == DType::float64;
}

// The DType that corresponds to a C++ scalar type.
template <typename T> constexpr DType dtype_of();
template <> constexpr DType dtype_of<float>() { return DType::float32; }
template <> constexpr DType dtype_of<double>() { return DType::float64; }
template <> constexpr DType dtype_of<std::int64_t>() { return DType::int64; }

[[noreturn]] void throw_unsupported_dtype(const char* op, DType dtype);

// Calls fn.template operator()<T>() with T = float or double for a floating dtype:
//
//   dispatch_floating(x.dtype(), "exp", [&]<typename T>() { exp_forward(y.data<T>(), ...); });
//
// Every other dtype raises DTypeError naming the op.
template <typename Fn>
decltype(auto) dispatch_floating(DType dtype, const char* op, Fn&& fn) {
  switch (dtype) {
    case DType::float32: return fn.template operator()<float>();
    case DType::float64: return fn.template operator()<double>();
    default: throw_unsupported_dtype(op, dtype);
  }
}

// As dispatch_floating, but int64 is accepted too (for ops that only move data around).
template <typename Fn>
decltype(auto) dispatch_all(DType dtype, const char* op, Fn&& fn) {
  switch (dtype) {
    case DType::float32: return fn.template operator()<float>();
    case DType::float64: return fn.template operator()<double>();
    case DType::int64: return fn.template operator()<std::int64_t>();
    default: throw_unsupported_dtype(op, dtype);
  }
}

}  // namespace tapegrad
