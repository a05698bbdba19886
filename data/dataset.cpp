// dataset.cpp — collate (stack examples) and TensorDataset (row gather by memcpy).
#include "dataset.hpp"

#include <cstring>

namespace tapegrad::data {

namespace {

void check_index(const char* op, std::int64_t index, std::int64_t size) {
  if (index < 0 || index >= size)
    throw ValueError(std::string(op) + ": index " + std::to_string(index) + " is out of range for " +
                     std::to_string(size) + " examples");
}

// (B, ...) from B tensors of one shape and dtype, each copied whole into its row.
Tensor stack_rows(std::span<const Example> examples, Tensor Example::*member, const char* what) {
  const Tensor& first = examples[0].*member;
  if (!first.defined()) throw ValueError(std::string("collate: example 0 has no ") + what);
  Shape shape = first.shape();
  shape.insert(shape.begin(), static_cast<std::int64_t>(examples.size()));
  Tensor out = Tensor::empty(shape, first.dtype());
  const std::size_t row_bytes = static_cast<std::size_t>(first.numel()) * size_of(first.dtype());
  auto* dst = static_cast<char*>(out.raw_data());
  for (std::size_t i = 0; i < examples.size(); ++i) {
    const Tensor& t = examples[i].*member;
    if (!t.defined()) throw ValueError("collate: example " + std::to_string(i) + " has no " + what);
    if (t.shape() != first.shape())
      throw ShapeError("collate: " + std::string(what) + " of example " + std::to_string(i) +
                       " has shape " + shape_str(t.shape()) + ", example 0 has " +
                       shape_str(first.shape()));
    if (t.dtype() != first.dtype())
      throw DTypeError("collate: " + std::string(what) + " of example " + std::to_string(i) + " is " +
                       dtype_name(t.dtype()) + ", example 0 is " + dtype_name(first.dtype()));
    const Tensor c = t.contiguous();
    std::memcpy(dst + i * row_bytes, c.raw_data(), row_bytes);
  }
  return out;
}

// Rows `indices` of a contiguous (N, ...) tensor -> (B, ...).
Tensor gather_rows(const Tensor& source, std::span<const std::int64_t> indices) {
  Shape shape = source.shape();
  shape[0] = static_cast<std::int64_t>(indices.size());
  Tensor out = Tensor::empty(shape, source.dtype());
  const std::size_t row_bytes =
      static_cast<std::size_t>(shape_numel(shape) / std::max<std::int64_t>(shape[0], 1)) *
      size_of(source.dtype());
  const auto* src = static_cast<const char*>(source.raw_data());
  auto* dst = static_cast<char*>(out.raw_data());
  for (std::size_t i = 0; i < indices.size(); ++i)
    std::memcpy(dst + i * row_bytes, src + static_cast<std::size_t>(indices[i]) * row_bytes, row_bytes);
  return out;
}

}  // namespace

Batch collate(std::span<const Example> examples) {
  if (examples.empty()) throw ValueError("collate: no examples");
  Batch batch;
  batch.inputs = stack_rows(examples, &Example::input, "input");
  batch.targets = stack_rows(examples, &Example::target, "target");
  return batch;
}

Batch Dataset::get_batch(std::span<const std::int64_t> indices) const {
  std::vector<Example> examples;
  examples.reserve(indices.size());
  for (std::int64_t i : indices) examples.push_back(get(i));
  return collate(examples);
}

TensorDataset::TensorDataset(const Tensor& inputs, const Tensor& targets) {
  if (!inputs.defined() || !targets.defined())
    throw ValueError("TensorDataset: inputs and targets must be defined tensors");
  if (inputs.dim() == 0 || targets.dim() == 0 || inputs.size(0) != targets.size(0))
    throw ShapeError("TensorDataset: inputs " + shape_str(inputs.shape()) + " and targets " +
                     shape_str(targets.shape()) + " must have the same first dim (the number of examples)");
  if (inputs.dtype() == DType::bfloat16 || targets.dtype() == DType::bfloat16)
    throw DTypeError("TensorDataset: bfloat16 is not supported");
  // Own copies: later in-place changes to the caller's tensors do not reach the dataset.
  inputs_ = inputs.detach().clone();
  targets_ = targets.detach().clone();
}

Example TensorDataset::get(std::int64_t index) const {
  check_index("TensorDataset.get", index, size());
  const std::int64_t one[] = {index};
  Example e;
  Tensor in = gather_rows(inputs_, one), tgt = gather_rows(targets_, one);
  // Drop the batch dim of 1: an example has the row's shape.
  e.input = in.reshape(Shape(inputs_.shape().begin() + 1, inputs_.shape().end()));
  e.target = tgt.reshape(Shape(targets_.shape().begin() + 1, targets_.shape().end()));
  return e;
}

Batch TensorDataset::get_batch(std::span<const std::int64_t> indices) const {
  for (std::int64_t i : indices) check_index("TensorDataset.get_batch", i, size());
  Batch batch;
  batch.inputs = gather_rows(inputs_, indices);
  batch.targets = gather_rows(targets_, indices);
  return batch;
}

}  // namespace tapegrad::data
