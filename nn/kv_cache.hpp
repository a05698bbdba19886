// kv_cache.hpp — the keys and values of the tokens a decoder has already seen, kept per layer
// so that generation feeds each new token once instead of recomputing the whole sequence.
//
// At step t a causal self-attention layer needs k_j and v_j of every earlier position j < t;
// they do not change once computed (causal: position j never sees later tokens), so each is
// computed once, stored here, and read by every later step. One step then costs O(t·C) in
// attention and O(C²) in the projections instead of O(t·C²) for the whole window.
// Storage is preallocated to the maximum length: per layer k and v of shape (B, Hkv, T_max, D),
// where Hkv is the attention's key/value heads (grouped-query attention stores Hkv heads,
// never repeated to H). Inference only: storing copies values and records nothing, so a
// forward through a cache is not differentiable (the attention refuses it in grad mode).
#pragma once

#include <utility>
#include <vector>

#include "../autograd/tensor.hpp"

namespace tapegrad::nn {

class KVCache {
 public:
  // n_layers layers of (batch, kv_heads, max_length, head_dim) keys and values.
  KVCache(std::int64_t n_layers, std::int64_t batch, std::int64_t kv_heads, std::int64_t max_length,
          std::int64_t head_dim, DType dtype = DType::float32);

  // Positions stored in every layer: the position of the next token.
  std::int64_t length() const { return length_; }
  std::int64_t max_length() const { return max_length_; }
  std::int64_t n_layers() const { return static_cast<std::int64_t>(k_.size()); }

  // Writes the new keys and values k_new, v_new: (B, Hkv, Tn, D) (any strides) of `layer` at
  // positions [length, length + Tn), and returns views of all of that layer's keys and values,
  // (B, Hkv, length + Tn, D). length() moves only with advance(), once every layer stored.
  std::pair<Tensor, Tensor> store(std::int64_t layer, const Tensor& k_new, const Tensor& v_new);
  // The model fed n more tokens through every layer.
  void advance(std::int64_t n);
  // Empties the cache (the storage is kept).
  void clear() { length_ = 0; }

 private:
  std::vector<Tensor> k_, v_;  // per layer (B, Hkv, T_max, D)
  std::int64_t length_ = 0, max_length_ = 0;
};

}  // namespace tapegrad::nn
