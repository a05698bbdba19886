// embedding.hpp — Embedding: a lookup table, y[..., :] = weight[index[...], :].
//
// weight: (num_embeddings, embedding_dim), init N(0, 1) as PyTorch.
#pragma once

#include "module.hpp"
#include "../autograd/options.hpp"

namespace tapegrad::nn {

struct EmbeddingOptions {
  EmbeddingOptions(std::int64_t num_embeddings, std::int64_t embedding_dim)
      : num_embeddings_(num_embeddings), embedding_dim_(embedding_dim) {}
  TAPEGRAD_ARG(std::int64_t, num_embeddings);
  TAPEGRAD_ARG(std::int64_t, embedding_dim);
  TAPEGRAD_ARG(DType, dtype) = DType::float32;
};

class Embedding : public UnaryModule {
 public:
  explicit Embedding(const EmbeddingOptions& options);
  Embedding(std::int64_t num, std::int64_t dim) : Embedding(EmbeddingOptions(num, dim)) {}
  // indices: int64 (...) -> (..., embedding_dim)
  Tensor forward(const Tensor& indices) override;
  std::string extra_repr() const override;

  EmbeddingOptions options;
  Tensor weight;  // (num_embeddings, embedding_dim)
};

}  // namespace tapegrad::nn
