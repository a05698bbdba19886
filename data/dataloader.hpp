// dataloader.hpp — batches from a Dataset: seeded shuffling, drop_last, a resumable position,
// an optional background thread that loads the next batch, and sharding for data parallelism.
//
//   DataLoader loader(dataset, DataLoaderOptions().batch_size(32).shuffle(true).seed(1));
//   for (std::int64_t step = 0; step < steps; ++step) {
//     Batch batch = loader.next();   // batch.inputs: (32, ...); epochs roll over by themselves
//     ...
//   }
//   LoaderState s = loader.state();  // {epoch, index}: all a checkpoint needs
//   loader.load_state(s);            // continues with exactly the batches that came next
//
// The order of an epoch is a pure function of (seed, epoch) — epoch_order() below — so the
// position {epoch, index} is the loader's whole state: no generator state to save.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <exception>
#include <iterator>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "../autograd/options.hpp"
#include "dataset.hpp"

namespace tapegrad::data {

struct DataLoaderOptions {
  TAPEGRAD_ARG(std::int64_t, batch_size) = 1;
  // Shuffle each epoch (a new order per epoch); otherwise 0, 1, 2, ... every epoch.
  TAPEGRAD_ARG(bool, shuffle) = false;
  TAPEGRAD_ARG(std::uint64_t, seed) = 0;
  // Skip the last batch of an epoch when it would be smaller than batch_size.
  TAPEGRAD_ARG(bool, drop_last) = false;
  // Load the next batch on a background thread while the current one is used.
  TAPEGRAD_ARG(bool, prefetch) = false;
};

// Where the loader is: the next batch starts at position `index` of epoch `epoch`'s order
// (counted in examples of this shard). After the last batch of an epoch: {epoch + 1, 0}.
struct LoaderState {
  std::int64_t epoch = 0;
  std::int64_t index = 0;
  bool operator==(const LoaderState&) const = default;
};

// The order of dataset indices 0..n-1 in an epoch: identity without shuffle, otherwise a
// Fisher-Yates shuffle drawn from Generator(mix(seed, epoch)).
std::vector<std::int64_t> epoch_order(std::int64_t n, bool shuffle, std::uint64_t seed, std::int64_t epoch);

class DataLoader;

// One epoch of a loader as a range, PyTorch's `for batch in loader:` (DataLoader::begin):
// the batches from the loader's position to the end of its epoch, taken with next().
class EpochIterator {
 public:
  using value_type = Batch;
  using difference_type = std::ptrdiff_t;
  EpochIterator() = default;
  explicit EpochIterator(DataLoader* loader);
  Batch& operator*() { return batch_; }
  Batch* operator->() { return &batch_; }
  EpochIterator& operator++();
  void operator++(int) { ++*this; }
  bool operator==(std::default_sentinel_t) const { return loader_ == nullptr; }

 private:
  void fetch();
  DataLoader* loader_ = nullptr;
  std::int64_t epoch_ = 0;
  Batch batch_;
};

class DataLoader {
 public:
  // The dataset is shared, not copied; it must outlive nothing in particular (shared_ptr).
  DataLoader(std::shared_ptr<const Dataset> dataset, const DataLoaderOptions& options = {});
  // Stops and joins the prefetch thread.
  ~DataLoader();
  DataLoader(const DataLoader&) = delete;
  DataLoader& operator=(const DataLoader&) = delete;

  // The next batch. At the end of an epoch the next epoch starts (with its own order).
  // With prefetch, an exception thrown while loading is rethrown here, and the position
  // stays where it was. Throws ValueError when an epoch has no batch at all.
  Batch next();

  // Restricts every epoch to the slice [rank·m, (rank+1)·m) of the full order, with
  // m = size / world_size: ranks get disjoint examples and the same number of batches (the
  // size % world_size examples at the end of each epoch's order are skipped). The position
  // is kept; call it before training starts.
  void shard(std::int64_t rank, std::int64_t world_size);

  LoaderState state() const;
  // for (Batch& batch : loader) { ... }: the rest of the current epoch, one batch at a time
  // (a whole epoch from a fresh loader, or right after the previous loop ended); the next loop
  // runs the next epoch. An epoch without a batch runs nothing.
  EpochIterator begin() { return EpochIterator(this); }
  std::default_sentinel_t end() { return {}; }
  // Throws ValueError for a negative epoch or an index outside [0, examples_per_epoch()].
  void load_state(const LoaderState& state);

  std::int64_t examples_per_epoch() const;  // of this shard
  std::int64_t batches_per_epoch() const;
  const DataLoaderOptions& options() const { return options_; }
  const Dataset& dataset() const { return *dataset_; }

 private:
  // The batch that starts at `pos`; touches order_cache_, so one thread at a time.
  Batch make_batch(const LoaderState& pos);
  // The position after the batch that starts at `pos`.
  LoaderState advance(const LoaderState& pos) const;
  // The examples an epoch uses: all of them, or floor(n / batch)·batch with drop_last.
  std::int64_t used_per_epoch() const;
  void worker_loop();
  // With prefetch: forget requests and results, and wait until the worker is idle, so that
  // the settings can change. Caller holds the lock.
  void quiesce(std::unique_lock<std::mutex>& lock);

  std::shared_ptr<const Dataset> dataset_;
  DataLoaderOptions options_;
  std::int64_t rank_ = 0, world_size_ = 1;
  LoaderState position_;

  std::int64_t cached_epoch_ = -1;
  std::vector<std::int64_t> order_cache_;  // this shard's order for cached_epoch_

  // Prefetch: one request slot and one result slot, guarded by mutex_.
  std::mutex mutex_;
  std::condition_variable cv_;
  std::thread worker_;
  bool stop_ = false;
  bool has_request_ = false, busy_ = false, has_result_ = false;
  LoaderState request_pos_, busy_pos_, result_pos_;
  Batch result_;
  std::exception_ptr result_error_;
};

}  // namespace tapegrad::data
