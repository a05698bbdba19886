// distributed_sampler.hpp — which rows of each global batch a rank of a data-parallel job
// reads. Needs no MPI: only the rank, the world size, the seed and the epoch.
//
// The global batch of B rows is what a single process would train on; rank r of W takes the
// rows [r·b, (r+1)·b) with b = B / W. The shards of one step are disjoint, cover the global
// batch, and depend on nothing but (seed, epoch, step), so a run is reproducible and its
// gradient, averaged over the ranks, is the single-process gradient of the global batch.
//
//   DistributedSampler sampler(dataset->size(), /*global_batch=*/64, rank, world, /*seed=*/1);
//   for (std::int64_t i = 0; i < sampler.batches_per_epoch(); ++i) {
//     Batch mine = sampler.batch(*dataset, epoch, i);   // 64 / world rows
//     ...
//   }
//
// For batches drawn at random instead (TokenStream::sample_batch): every rank draws the whole
// global batch from the same generator and keeps its rows with shard_of().
#pragma once

#include <cstdint>
#include <vector>

#include "dataset.hpp"

namespace tapegrad::data {

// The rows [begin, end) of a global batch that one rank takes.
struct RowRange {
  std::int64_t begin = 0, end = 0;
  std::int64_t size() const { return end - begin; }
};

// Rows [rank·b, (rank+1)·b), b = global_batch / world_size. Throws ValueError unless
// 0 <= rank < world_size and world_size divides global_batch (equal shards are what make the
// mean of the ranks' mean losses the mean loss of the global batch).
RowRange shard_rows(std::int64_t global_batch, std::int64_t rank, std::int64_t world_size);

// This rank's rows of a global batch: inputs, targets and indices cut to shard_rows(...),
// as contiguous tensors. The epoch is kept.
Batch shard_of(const Batch& global, std::int64_t rank, std::int64_t world_size);

class DistributedSampler {
 public:
  // Global batch i of epoch e is epoch_order(size, shuffle, seed, e)[i·B, (i+1)·B) (see
  // dataloader.hpp); the examples after the last whole global batch of an epoch are skipped,
  // so every rank has the same number of batches. Throws ValueError as shard_rows does, and
  // when the dataset holds fewer than global_batch examples.
  DistributedSampler(std::int64_t dataset_size, std::int64_t global_batch, std::int64_t rank,
                     std::int64_t world_size, std::uint64_t seed, bool shuffle = true);

  std::int64_t batches_per_epoch() const { return dataset_size_ / global_batch_; }
  std::int64_t local_batch() const { return global_batch_ / world_size_; }

  // The dataset indices of global batch `batch` of `epoch` (all B of them), and this rank's.
  // Throws ValueError for a negative epoch or a batch outside [0, batches_per_epoch()).
  std::vector<std::int64_t> global_indices(std::int64_t epoch, std::int64_t batch) const;
  std::vector<std::int64_t> indices(std::int64_t epoch, std::int64_t batch) const;
  // dataset.get_batch(indices(epoch, batch)) with indices and epoch filled in.
  Batch batch(const Dataset& dataset, std::int64_t epoch, std::int64_t batch) const;

 private:
  std::int64_t dataset_size_, global_batch_, rank_, world_size_;
  std::uint64_t seed_;
  bool shuffle_;
  // The order of the last epoch asked for: one shuffle per epoch, not one per batch (so one
  // sampler is for one thread).
  mutable std::int64_t cached_epoch_ = -1;
  mutable std::vector<std::int64_t> order_;
};

}  // namespace tapegrad::data
