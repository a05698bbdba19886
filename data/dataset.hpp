// dataset.hpp — a Dataset is a size and a way to get example i; a Batch is examples stacked
// along a new first dim. DataLoader (dataloader.hpp) picks the indices.
//
//   auto data = std::make_shared<TensorDataset>(x, y);   // x: (N, ...), y: (N, ...)
//   Example e = data->get(3);                            // e.input: x[3], e.target: y[3]
//   Batch b = data->get_batch(indices);                  // b.inputs: (B, ...)
//
// get and get_batch must only read: a DataLoader with prefetch calls them from its
// background thread while the training loop runs.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "../autograd/tensor.hpp"

namespace tapegrad::data {

struct Example {
  Tensor input;
  Tensor target;
};

struct Batch {
  Tensor inputs;                      // (B, ...): the examples' inputs, stacked
  Tensor targets;                     // (B, ...)
  std::vector<std::int64_t> indices;  // the dataset index of each row (filled by DataLoader)
  std::int64_t epoch = 0;             // the epoch the batch belongs to (filled by DataLoader)
};

class Dataset {
 public:
  virtual ~Dataset() = default;
  virtual std::int64_t size() const = 0;
  // Throws ValueError for an index outside [0, size()).
  virtual Example get(std::int64_t index) const = 0;
  // The examples at `indices` stacked along a new dim 0 (indices left empty). The default
  // stacks get(i) with collate(); datasets override it when they can gather rows faster.
  virtual Batch get_batch(std::span<const std::int64_t> indices) const;
};

// Stacks examples into a batch. Every input must have the same shape and dtype, and every
// target too (ShapeError / DTypeError naming the first example that differs). Not empty.
Batch collate(std::span<const Example> examples);

// Rows of fixed-size tensors: example i is (inputs[i], targets[i]). Any dtype (float32,
// float64, int64). The tensors are kept as contiguous, detached copies of the data.
class TensorDataset : public Dataset {
 public:
  // inputs: (N, ...), targets: (N, ...) with the same N >= 0.
  TensorDataset(const Tensor& inputs, const Tensor& targets);

  std::int64_t size() const override { return inputs_.size(0); }
  Example get(std::int64_t index) const override;
  // Copies the rows directly (one memcpy per row and tensor).
  Batch get_batch(std::span<const std::int64_t> indices) const override;

  const Tensor& inputs() const { return inputs_; }
  const Tensor& targets() const { return targets_; }

 private:
  Tensor inputs_, targets_;
};

}  // namespace tapegrad::data
