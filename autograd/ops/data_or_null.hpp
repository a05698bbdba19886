// data_or_null.hpp — an optional tensor's data for a raw kernel: its pointer, or nullptr when
// the tensor is undefined (a LayerNorm without affine weight, a Linear without bias).
#pragma once

#include "../tensor.hpp"

namespace tapegrad {

template <typename T>
const T* data_or_null(const Tensor& t) {
  return t.defined() ? t.data<T>() : nullptr;
}

}  // namespace tapegrad
