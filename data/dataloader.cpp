// dataloader.cpp — epoch orders, batching, the resumable position and the prefetch thread.
//
// Prefetch protocol (all under mutex_): next() puts the position it wants in the request
// slot unless that batch is already requested, being made, or made; waits for a result with
// that position; takes it; advances; and requests the following batch. The worker takes a
// request, makes the batch without the lock, and posts the result (or the exception).
// Results for a position nobody waits for any more (after load_state) are ignored.
#include "dataloader.hpp"

#include <algorithm>
#include <numeric>
#include <utility>

#include "../autograd/random.hpp"

namespace tapegrad::data {

namespace {

// SplitMix64's finalizer: a bijective scramble of 64 bits.
std::uint64_t mix64(std::uint64_t z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

}  // namespace

std::vector<std::int64_t> epoch_order(std::int64_t n, bool shuffle, std::uint64_t seed, std::int64_t epoch) {
  if (n < 0) throw ValueError("epoch_order: n must be >= 0, got " + std::to_string(n));
  std::vector<std::int64_t> order(static_cast<std::size_t>(n));
  std::iota(order.begin(), order.end(), 0);
  if (!shuffle) return order;
  // Each (seed, epoch) pair seeds its own generator: no state carries from epoch to epoch.
  Generator gen(mix64(seed ^ mix64(static_cast<std::uint64_t>(epoch) + 0x9e3779b97f4a7c15ULL)));
  for (std::int64_t i = n - 1; i > 0; --i) {
    const auto j = static_cast<std::int64_t>(gen.next_below(static_cast<std::uint64_t>(i + 1)));
    std::swap(order[static_cast<std::size_t>(i)], order[static_cast<std::size_t>(j)]);
  }
  return order;
}

DataLoader::DataLoader(std::shared_ptr<const Dataset> dataset, const DataLoaderOptions& options)
    : dataset_(std::move(dataset)), options_(options) {
  if (!dataset_) throw ValueError("DataLoader: the dataset is null");
  if (options_.batch_size() < 1)
    throw ValueError("DataLoader: batch_size must be >= 1, got " + std::to_string(options_.batch_size()));
  if (options_.prefetch()) worker_ = std::thread([this] { worker_loop(); });
}

DataLoader::~DataLoader() {
  if (!worker_.joinable()) return;
  {
    std::lock_guard lock(mutex_);
    stop_ = true;
  }
  cv_.notify_all();
  worker_.join();
}

std::int64_t DataLoader::examples_per_epoch() const { return dataset_->size() / world_size_; }

std::int64_t DataLoader::used_per_epoch() const {
  const std::int64_t n = examples_per_epoch(), b = options_.batch_size();
  return options_.drop_last() ? n / b * b : n;
}

std::int64_t DataLoader::batches_per_epoch() const {
  const std::int64_t n = examples_per_epoch(), b = options_.batch_size();
  return options_.drop_last() ? n / b : (n + b - 1) / b;
}

LoaderState DataLoader::advance(const LoaderState& pos) const {
  const std::int64_t end = std::min(pos.index + options_.batch_size(), used_per_epoch());
  if (end >= used_per_epoch()) return {pos.epoch + 1, 0};
  return {pos.epoch, end};
}

Batch DataLoader::make_batch(const LoaderState& pos) {
  if (cached_epoch_ != pos.epoch) {
    std::vector<std::int64_t> full = epoch_order(dataset_->size(), options_.shuffle(), options_.seed(), pos.epoch);
    const std::int64_t m = examples_per_epoch();
    order_cache_.assign(full.begin() + rank_ * m, full.begin() + (rank_ + 1) * m);
    cached_epoch_ = pos.epoch;
  }
  const std::int64_t end = std::min(pos.index + options_.batch_size(), used_per_epoch());
  const std::span<const std::int64_t> indices(order_cache_.data() + pos.index,
                                              static_cast<std::size_t>(end - pos.index));
  Batch batch = dataset_->get_batch(indices);
  batch.indices.assign(indices.begin(), indices.end());
  batch.epoch = pos.epoch;
  return batch;
}

Batch DataLoader::next() {
  if (batches_per_epoch() == 0)
    throw ValueError("DataLoader: an epoch has no batch (" + std::to_string(examples_per_epoch()) +
                     " examples per epoch, batch_size " + std::to_string(options_.batch_size()) +
                     (options_.drop_last() ? ", drop_last" : "") + ")");
  if (!options_.prefetch()) {
    Batch batch = make_batch(position_);
    position_ = advance(position_);
    return batch;
  }
  std::unique_lock lock(mutex_);
  const LoaderState pos = position_;
  const bool on_its_way = (has_request_ && request_pos_ == pos) || (busy_ && busy_pos_ == pos) ||
                          (has_result_ && result_pos_ == pos);
  if (!on_its_way) {
    has_request_ = true;
    request_pos_ = pos;
    cv_.notify_all();
  }
  cv_.wait(lock, [&] { return has_result_ && result_pos_ == pos; });
  has_result_ = false;
  if (result_error_) std::rethrow_exception(std::exchange(result_error_, nullptr));
  Batch batch = std::move(result_);
  position_ = advance(pos);
  // Start on the following batch while the caller works on this one.
  has_request_ = true;
  request_pos_ = position_;
  cv_.notify_all();
  return batch;
}

void DataLoader::worker_loop() {
  std::unique_lock lock(mutex_);
  while (true) {
    cv_.wait(lock, [&] { return stop_ || has_request_; });
    if (stop_) return;
    const LoaderState pos = request_pos_;
    has_request_ = false;
    busy_ = true;
    busy_pos_ = pos;
    lock.unlock();
    Batch batch;
    std::exception_ptr error;
    try {
      batch = make_batch(pos);
    } catch (...) {
      error = std::current_exception();
    }
    lock.lock();
    busy_ = false;
    result_ = std::move(batch);
    result_error_ = error;
    result_pos_ = pos;
    has_result_ = true;
    cv_.notify_all();
  }
}

void DataLoader::quiesce(std::unique_lock<std::mutex>& lock) {
  has_request_ = false;
  cv_.wait(lock, [&] { return !busy_; });
  has_result_ = false;
  result_ = Batch();
  result_error_ = nullptr;
}

LoaderState DataLoader::state() const { return position_; }

void DataLoader::load_state(const LoaderState& state) {
  if (state.epoch < 0 || state.index < 0 || state.index > examples_per_epoch())
    throw ValueError("DataLoader.load_state: position {epoch " + std::to_string(state.epoch) +
                     ", index " + std::to_string(state.index) + "} is invalid (epochs count from 0, " +
                     "index must be in [0, " + std::to_string(examples_per_epoch()) + "])");
  std::unique_lock lock(mutex_);
  if (options_.prefetch()) quiesce(lock);
  // A position at the end of an epoch is the start of the next one, as advance() writes it.
  const bool at_end = state.index > 0 && state.index >= used_per_epoch();
  position_ = at_end ? LoaderState{state.epoch + 1, 0} : state;
}

void DataLoader::shard(std::int64_t rank, std::int64_t world_size) {
  if (world_size < 1 || rank < 0 || rank >= world_size)
    throw ValueError("DataLoader.shard: expected 0 <= rank < world_size, got rank " +
                     std::to_string(rank) + " and world_size " + std::to_string(world_size));
  std::unique_lock lock(mutex_);
  if (options_.prefetch()) quiesce(lock);
  rank_ = rank;
  world_size_ = world_size;
  cached_epoch_ = -1;
  if (position_.index > 0 && position_.index >= used_per_epoch()) position_ = {position_.epoch + 1, 0};
}

EpochIterator::EpochIterator(DataLoader* loader) : loader_(loader), epoch_(loader->state().epoch) { fetch(); }

EpochIterator& EpochIterator::operator++() {
  fetch();
  return *this;
}

void EpochIterator::fetch() {
  // next() rolls over into the next epoch after the last batch of this one: stop there
  if (loader_ == nullptr || loader_->state().epoch != epoch_ || loader_->batches_per_epoch() == 0) {
    loader_ = nullptr;
    return;
  }
  batch_ = loader_->next();
}

}  // namespace tapegrad::data
