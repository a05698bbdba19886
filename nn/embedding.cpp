// embedding.cpp — Embedding on the embedding() op (scatter-add backward).
#include "embedding.hpp"

#include "../autograd/ops.hpp"
#include "init.hpp"

namespace tapegrad::nn {

Embedding::Embedding(const EmbeddingOptions& opts) : UnaryModule("Embedding"), options(opts) {
  if (opts.num_embeddings() <= 0 || opts.embedding_dim() <= 0)
    throw ValueError("Embedding: num_embeddings and embedding_dim must be positive, got " +
                     std::to_string(opts.num_embeddings()) + " and " + std::to_string(opts.embedding_dim()));
  Tensor w = Tensor::empty({opts.num_embeddings(), opts.embedding_dim()}, opts.dtype());
  init::normal_(w, 0.0, 1.0);
  weight = register_parameter("weight", w);
}

Tensor Embedding::forward(const Tensor& input) {
  Tensor indices = input;
  ForwardCall call(*this, {&indices});
  return call.output(embedding(weight, indices));
}

std::string Embedding::extra_repr() const {
  return "num_embeddings=" + std::to_string(options.num_embeddings()) +
         ", embedding_dim=" + std::to_string(options.embedding_dim());
}

}  // namespace tapegrad::nn
