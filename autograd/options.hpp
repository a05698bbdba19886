// options.hpp — TAPEGRAD_ARG: one chained setter for an options struct, written out by hand
// in place of LibTorch's TORCH_ARG:
//
//   struct LinearOptions {
//     TAPEGRAD_ARG(bool, bias) = true;
//   };
//   LinearOptions(3, 4).bias(false);
//
// expands to a public member `bias_` and a setter `bias(v)` returning *this, and a getter `bias()`.
#pragma once

#define TAPEGRAD_ARG(T, name)                        \
 public:                                             \
  auto& name(const T& value) {                       \
    name##_ = value;                                 \
    return *this;                                    \
  }                                                  \
  const T& name() const { return name##_; }          \
  T name##_
