// tiny_job.hpp — what the MPI test programs (ddp_test, zero_test) train and compare: a tiny
// TransformerLM, random sequences for it, the optimizers, and the bytes of a model's state.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <tapegrad/distributed/process_group.hpp>
#include <tapegrad/tapegrad.hpp>

namespace tiny_job {

using namespace tapegrad;

constexpr std::int64_t kVocab = 16, kSeqLen = 8;

inline std::shared_ptr<nn::TransformerLM> tiny_lm(std::uint64_t seed, DType dtype = DType::float64) {
  manual_seed(seed);
  nn::TransformerLMConfig config;
  config.vocab_size = kVocab;
  config.max_seq_len = kSeqLen;
  config.n_layers = 2;
  config.block.d_model = 16;
  config.block.n_heads = 2;
  config.block.dtype = dtype;
  return std::make_shared<nn::TransformerLM>(config);
}

// 64 random sequences; the targets are the inputs shifted by one token (mod V).
inline std::shared_ptr<data::TensorDataset> random_sequences() {
  Generator gen(42);
  const Tensor x = randint(0, kVocab, {64, kSeqLen}, gen);
  std::vector<std::int64_t> y = x.to_vector<std::int64_t>();
  for (auto& t : y) t = (t + 1) % kVocab;
  return std::make_shared<data::TensorDataset>(x, Tensor::from_vector(y, {64, kSeqLen}));
}

// SGD with momentum, or AdamW as train_lm uses it.
inline std::unique_ptr<optim::Optimizer> make_optimizer(const nn::Module& model, const std::string& kind) {
  if (kind == "sgd") return std::make_unique<optim::SGD>(model.named_parameters(), optim::SGDOptions(0.1).momentum(0.9));
  return std::make_unique<optim::AdamW>(
      optim::weight_decay_groups(model, optim::AdamOptions(1e-2).betas(optim::Betas(0.9, 0.95)).weight_decay(0.1)));
}

// The bytes of every parameter and buffer, in named order.
inline std::vector<char> state_bytes(const nn::Module& model) {
  std::vector<char> out;
  auto append = [&](const Tensor& t) {
    const Tensor c = t.contiguous();
    const auto* p = static_cast<const char*>(c.raw_data());
    out.insert(out.end(), p, p + c.numel() * static_cast<std::int64_t>(size_of(c.dtype())));
  };
  for (const auto& [_, p] : model.named_parameters()) append(p);
  for (const auto& [_, b] : model.named_buffers()) append(b);
  return out;
}

// True on every rank when every rank holds exactly rank 0's bytes.
inline bool same_bytes_as_rank0(const nn::Module& model, const distributed::ProcessGroup& group) {
  const std::vector<char> mine = state_bytes(model);
  std::vector<char> root = mine;
  group.broadcast(root.data(), static_cast<std::int64_t>(root.size()), 0);
  return !group.any(mine != root);
}

}  // namespace tiny_job
