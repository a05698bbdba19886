// distributed_sampler.cpp — shard arithmetic and the per-epoch order of DistributedSampler.
#include "distributed_sampler.hpp"

#include <string>

#include "../autograd/ops.hpp"
#include "dataloader.hpp"

namespace tapegrad::data {

RowRange shard_rows(std::int64_t global_batch, std::int64_t rank, std::int64_t world_size) {
  if (world_size < 1 || rank < 0 || rank >= world_size)
    throw ValueError("shard_rows: rank " + std::to_string(rank) + " is not in [0, world_size = " +
                     std::to_string(world_size) + ")");
  if (global_batch < 1 || global_batch % world_size != 0)
    throw ValueError("shard_rows: the global batch of " + std::to_string(global_batch) +
                     " rows does not split into " + std::to_string(world_size) +
                     " equal shards (it must be a positive multiple of the number of processes)");
  const std::int64_t b = global_batch / world_size;
  return {rank * b, (rank + 1) * b};
}

Batch shard_of(const Batch& global, std::int64_t rank, std::int64_t world_size) {
  const RowRange rows = shard_rows(global.inputs.size(0), rank, world_size);
  Batch mine;
  mine.inputs = narrow(global.inputs, 0, rows.begin, rows.size()).contiguous();
  mine.targets = narrow(global.targets, 0, rows.begin, rows.size()).contiguous();
  if (!global.indices.empty())
    mine.indices.assign(global.indices.begin() + rows.begin, global.indices.begin() + rows.end);
  mine.epoch = global.epoch;
  return mine;
}

DistributedSampler::DistributedSampler(std::int64_t dataset_size, std::int64_t global_batch, std::int64_t rank,
                                       std::int64_t world_size, std::uint64_t seed, bool shuffle)
    : dataset_size_(dataset_size), global_batch_(global_batch), rank_(rank), world_size_(world_size),
      seed_(seed), shuffle_(shuffle) {
  shard_rows(global_batch, rank, world_size);  // checks the arguments
  if (dataset_size < global_batch)
    throw ValueError("DistributedSampler: the dataset has " + std::to_string(dataset_size) +
                     " examples, fewer than one global batch of " + std::to_string(global_batch));
}

std::vector<std::int64_t> DistributedSampler::global_indices(std::int64_t epoch, std::int64_t batch) const {
  if (epoch < 0) throw ValueError("DistributedSampler: epoch must be >= 0, got " + std::to_string(epoch));
  if (batch < 0 || batch >= batches_per_epoch())
    throw ValueError("DistributedSampler: batch " + std::to_string(batch) + " is not in [0, " +
                     std::to_string(batches_per_epoch()) + ")");
  if (epoch != cached_epoch_) {
    order_ = epoch_order(dataset_size_, shuffle_, seed_, epoch);
    cached_epoch_ = epoch;
  }
  const auto first = order_.begin() + batch * global_batch_;
  return {first, first + global_batch_};
}

std::vector<std::int64_t> DistributedSampler::indices(std::int64_t epoch, std::int64_t batch) const {
  const std::vector<std::int64_t> all = global_indices(epoch, batch);
  const RowRange rows = shard_rows(global_batch_, rank_, world_size_);
  return {all.begin() + rows.begin, all.begin() + rows.end};
}

Batch DistributedSampler::batch(const Dataset& dataset, std::int64_t epoch, std::int64_t batch) const {
  const std::vector<std::int64_t> mine = indices(epoch, batch);
  Batch out = dataset.get_batch(mine);
  out.indices = mine;
  out.epoch = epoch;
  return out;
}

}  // namespace tapegrad::data
