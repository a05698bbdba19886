// kv_cache.cpp — KVCache: preallocated per-layer keys and values, written row by row.
#include "kv_cache.hpp"

#include <cstring>
#include <string>

#include "../autograd/errors.hpp"
#include "../autograd/ops.hpp"

namespace tapegrad::nn {

KVCache::KVCache(std::int64_t n_layers, std::int64_t batch, std::int64_t kv_heads, std::int64_t max_length,
                 std::int64_t head_dim, DType dtype)
    : max_length_(max_length) {
  if (n_layers < 0 || batch <= 0 || kv_heads <= 0 || max_length <= 0 || head_dim <= 0)
    throw ValueError("KVCache: n_layers must be >= 0 and batch, kv_heads, max_length, head_dim positive, got " +
                     std::to_string(n_layers) + ", " + std::to_string(batch) + ", " + std::to_string(kv_heads) + ", " +
                     std::to_string(max_length) + ", " + std::to_string(head_dim));
  for (std::int64_t l = 0; l < n_layers; ++l) {
    // Positions past length() are never read, so the storage is not zero-filled.
    k_.push_back(Tensor::empty({batch, kv_heads, max_length, head_dim}, dtype));
    v_.push_back(Tensor::empty({batch, kv_heads, max_length, head_dim}, dtype));
  }
}

namespace {
// dst[b, h, t0 + t, :] = src[b, h, t, :]: one row of D values at a time, from any strides
// with a contiguous last dim (a view of the packed qkv projection is one), else element-wise.
void write_rows(Tensor& dst, const Tensor& src, std::int64_t t0) {
  if (src.strides()[3] != 1 || src.dtype() != dst.dtype()) {
    narrow(dst, 2, t0, src.size(2)).copy_(src);
    return;
  }
  const std::int64_t B = src.size(0), H = src.size(1), Tn = src.size(2), D = src.size(3);
  const std::int64_t T_max = dst.size(2);
  const std::size_t row_bytes = static_cast<std::size_t>(D) * size_of(src.dtype());
  const auto* s = static_cast<const unsigned char*>(src.raw_data());
  auto* d = static_cast<unsigned char*>(dst.raw_data());
  const auto esize = static_cast<std::int64_t>(size_of(src.dtype()));
  for (std::int64_t b = 0; b < B; ++b)
    for (std::int64_t h = 0; h < H; ++h)
      for (std::int64_t t = 0; t < Tn; ++t)
        std::memcpy(d + (((b * H + h) * T_max + t0 + t) * D) * esize,
                    s + (b * src.strides()[0] + h * src.strides()[1] + t * src.strides()[2]) * esize, row_bytes);
}
}  // namespace

std::pair<Tensor, Tensor> KVCache::store(std::int64_t layer, const Tensor& k_new, const Tensor& v_new) {
  if (layer < 0 || layer >= n_layers())
    throw ValueError("KVCache: layer " + std::to_string(layer) + " is not one of its " + std::to_string(n_layers()) +
                     " layers");
  Tensor& k = k_[layer];
  Tensor& v = v_[layer];
  const Shape expected{k.size(0), k.size(1), k_new.dim() == 4 ? k_new.size(2) : -1, k.size(3)};
  if (k_new.shape() != expected || v_new.shape() != expected)
    throw ShapeError("KVCache: new keys and values must be (B, Hkv, Tn, D) = " + shape_str({k.size(0), k.size(1)}) +
                     " + (Tn, " + std::to_string(k.size(3)) + "), got k " + shape_str(k_new.shape()) + ", v " +
                     shape_str(v_new.shape()));
  const std::int64_t end = length_ + k_new.size(2);
  if (end > max_length_)
    throw ValueError("KVCache: storing " + std::to_string(k_new.size(2)) + " positions after " +
                     std::to_string(length_) + " exceeds its max_length " + std::to_string(max_length_));
  write_rows(k, k_new, length_);
  write_rows(v, v_new, length_);
  return {narrow(k, 2, 0, end), narrow(v, 2, 0, end)};  // views: (B, Hkv, end, D)
}

void KVCache::advance(std::int64_t n) {
  if (n < 0 || length_ + n > max_length_)
    throw ValueError("KVCache: advance(" + std::to_string(n) + ") from length " + std::to_string(length_) +
                     " must stay within max_length " + std::to_string(max_length_));
  length_ += n;
}

}  // namespace tapegrad::nn
