// test_dataloader.cpp — Dataset/TensorDataset/collate, and the DataLoader: order determinism,
// epochs, drop_last, sharding, resuming from a saved position (with and without prefetch), and
// exceptions forwarded from the prefetch thread.
#include <algorithm>
#include <numeric>
#include <set>

#include "data_helpers.hpp"

using namespace tapegrad;
using namespace tapegrad::data;
using tapegrad::testing::numbered_dataset;

namespace {

// The next `count` batches as their index lists; also checks rows match their indices.
std::vector<std::vector<std::int64_t>> take(DataLoader& loader, int count) {
  std::vector<std::vector<std::int64_t>> out;
  for (int i = 0; i < count; ++i) {
    const Batch b = loader.next();
    const auto targets = b.targets.to_vector<std::int64_t>();
    const auto inputs = b.inputs.to_vector<float>();
    REQUIRE(targets.size() == b.indices.size());
    for (std::size_t r = 0; r < b.indices.size(); ++r) {
      CHECK(targets[r] == b.indices[r]);
      CHECK(inputs[2 * r + 1] == 10.0f * static_cast<float>(b.indices[r]));
    }
    out.push_back(b.indices);
  }
  return out;
}

std::vector<std::int64_t> flatten(const std::vector<std::vector<std::int64_t>>& batches) {
  std::vector<std::int64_t> all;
  for (const auto& b : batches) all.insert(all.end(), b.begin(), b.end());
  return all;
}

// Throws on example `bad`, counts get() calls.
class FlakyDataset : public Dataset {
 public:
  explicit FlakyDataset(std::int64_t bad) : bad_(bad) {}
  std::int64_t size() const override { return 8; }
  Example get(std::int64_t index) const override {
    if (index == bad_) throw ValueError("FlakyDataset: example " + std::to_string(index) + " is broken");
    return {scalar_tensor(static_cast<double>(index)), scalar_tensor(0.0, DType::int64)};
  }

 private:
  std::int64_t bad_;
};

}  // namespace

TEST_CASE("epoch_order is a permutation that depends only on (seed, epoch)", "[data][dataloader]") {
  const auto a = epoch_order(100, true, 7, 3);
  std::vector<std::int64_t> sorted = a;
  std::sort(sorted.begin(), sorted.end());
  for (std::int64_t i = 0; i < 100; ++i) CHECK(sorted[static_cast<std::size_t>(i)] == i);
  CHECK(a == epoch_order(100, true, 7, 3));
  CHECK(a != epoch_order(100, true, 7, 4));
  CHECK(a != epoch_order(100, true, 8, 3));
  std::vector<std::int64_t> identity(100);
  std::iota(identity.begin(), identity.end(), 0);
  CHECK(a != identity);
  CHECK(epoch_order(100, false, 7, 3) == identity);
  CHECK(epoch_order(0, true, 1, 0).empty());
  REQUIRE_THROWS_WITH(epoch_order(-1, true, 1, 0), Catch::Contains("n must be >= 0"));
}

TEST_CASE("DataLoader: every index once per epoch, a new order each epoch, the last batch partial",
          "[data][dataloader]") {
  DataLoader loader(numbered_dataset(10), DataLoaderOptions().batch_size(3).shuffle(true).seed(5));
  CHECK(loader.batches_per_epoch() == 4);
  const auto epoch0 = take(loader, 4);
  CHECK(loader.state() == LoaderState{1, 0});
  const auto epoch1 = take(loader, 4);
  for (const auto* epoch : {&epoch0, &epoch1}) {
    CHECK((*epoch)[0].size() == 3);
    CHECK((*epoch)[3].size() == 1);  // 10 = 3 + 3 + 3 + 1
    std::vector<std::int64_t> all = flatten(*epoch);
    std::sort(all.begin(), all.end());
    CHECK(all == std::vector<std::int64_t>{0, 1, 2, 3, 4, 5, 6, 7, 8, 9});
  }
  CHECK(flatten(epoch0) != flatten(epoch1));
  CHECK(flatten(epoch0) == epoch_order(10, true, 5, 0));
  CHECK(flatten(epoch1) == epoch_order(10, true, 5, 1));

  // Same seed: same batches. Another seed: another order.
  DataLoader same(numbered_dataset(10), DataLoaderOptions().batch_size(3).shuffle(true).seed(5));
  CHECK(take(same, 4) == epoch0);
  DataLoader other(numbered_dataset(10), DataLoaderOptions().batch_size(3).shuffle(true).seed(6));
  CHECK(take(other, 4) != epoch0);
}

TEST_CASE("DataLoader: without shuffle the order is 0..n-1 every epoch", "[data][dataloader]") {
  DataLoader loader(numbered_dataset(5), DataLoaderOptions().batch_size(2));
  using V = std::vector<std::vector<std::int64_t>>;
  CHECK(take(loader, 3) == V{{0, 1}, {2, 3}, {4}});
  CHECK(take(loader, 3) == V{{0, 1}, {2, 3}, {4}});
  const Batch b = DataLoader(numbered_dataset(5), DataLoaderOptions().batch_size(2)).next();
  CHECK(b.inputs.shape() == Shape{2, 2});
  CHECK(b.inputs.dtype() == DType::float32);
  CHECK(b.targets.shape() == Shape{2});
  CHECK(b.targets.dtype() == DType::int64);
  CHECK(b.epoch == 0);
}

TEST_CASE("DataLoader: drop_last skips the partial batch", "[data][dataloader]") {
  DataLoader loader(numbered_dataset(10), DataLoaderOptions().batch_size(3).shuffle(true).seed(1).drop_last(true));
  CHECK(loader.batches_per_epoch() == 3);
  const auto epoch0 = take(loader, 3);
  CHECK(loader.state() == LoaderState{1, 0});
  for (const auto& b : epoch0) CHECK(b.size() == 3);
  const std::vector<std::int64_t> order = epoch_order(10, true, 1, 0);
  CHECK(flatten(epoch0) == std::vector<std::int64_t>(order.begin(), order.begin() + 9));
  const Batch next = loader.next();
  CHECK(next.epoch == 1);
  CHECK(next.indices.size() == 3);

  DataLoader too_small(numbered_dataset(2), DataLoaderOptions().batch_size(3).drop_last(true));
  CHECK(too_small.batches_per_epoch() == 0);
  REQUIRE_THROWS_AS(too_small.next(), ValueError);
  REQUIRE_THROWS_WITH(too_small.next(), Catch::Contains("an epoch has no batch") && Catch::Contains("drop_last"));
}

TEST_CASE("DataLoader: a saved position resumes with exactly the batches that came next",
          "[data][dataloader][resume]") {
  const bool prefetch_before = GENERATE(false, true);
  const bool prefetch_after = GENERATE(false, true);
  const bool drop_last = GENERATE(false, true);
  const int consumed = GENERATE(0, 1, 2, 3, 4, 5);  // 0..3 batches per epoch: crosses the boundary
  CAPTURE(prefetch_before, prefetch_after, drop_last, consumed);
  auto data = numbered_dataset(11);
  const auto options = DataLoaderOptions().batch_size(3).shuffle(true).seed(42).drop_last(drop_last);

  DataLoader reference(data, DataLoaderOptions(options).prefetch(false));
  const auto expected = take(reference, 12);

  LoaderState saved;
  {
    DataLoader first(data, DataLoaderOptions(options).prefetch(prefetch_before));
    const auto head = take(first, consumed);
    CHECK(head == std::vector<std::vector<std::int64_t>>(expected.begin(), expected.begin() + consumed));
    saved = first.state();
  }  // destroyed: with prefetch, a batch was being loaded for the next position
  DataLoader second(data, DataLoaderOptions(options).prefetch(prefetch_after));
  second.load_state(saved);
  CHECK(second.state() == saved);
  CHECK(take(second, 12 - consumed) ==
        std::vector<std::vector<std::int64_t>>(expected.begin() + consumed, expected.end()));
}

TEST_CASE("DataLoader: load_state on a running loader discards the batch loaded ahead",
          "[data][dataloader][resume]") {
  const bool prefetch = GENERATE(false, true);
  auto data = numbered_dataset(9);
  DataLoader loader(data, DataLoaderOptions().batch_size(2).shuffle(true).seed(3).prefetch(prefetch));
  const auto first = take(loader, 3);
  loader.load_state({0, 2});  // back to the second batch of epoch 0
  CHECK(take(loader, 2) == std::vector<std::vector<std::int64_t>>(first.begin() + 1, first.end()));
  // The end of an epoch is the start of the next one.
  loader.load_state({0, 9});
  CHECK(loader.state() == LoaderState{1, 0});
  CHECK(loader.next().epoch == 1);
  // A position that is not at a batch boundary is allowed: the batch starts there.
  loader.load_state({2, 1});
  const auto order = epoch_order(9, true, 3, 2);
  CHECK(loader.next().indices == std::vector<std::int64_t>{order[1], order[2]});

  REQUIRE_THROWS_WITH(loader.load_state({0, 10}), Catch::Contains("index must be in [0, 9]"));
  REQUIRE_THROWS_WITH(loader.load_state({-1, 0}), Catch::Contains("is invalid"));
}

TEST_CASE("DataLoader: prefetch gives the same batches as loading in place", "[data][dataloader]") {
  auto data = numbered_dataset(23);
  const auto options = DataLoaderOptions().batch_size(4).shuffle(true).seed(9);
  DataLoader plain(data, options), prefetched(data, DataLoaderOptions(options).prefetch(true));
  CHECK(take(plain, 20) == take(prefetched, 20));
}

TEST_CASE("DataLoader: an exception in the prefetch thread reaches the caller", "[data][dataloader]") {
  const bool prefetch = GENERATE(false, true);
  auto data = std::make_shared<FlakyDataset>(5);
  DataLoader loader(data, DataLoaderOptions().batch_size(2).prefetch(prefetch));
  CHECK(loader.next().indices == std::vector<std::int64_t>{0, 1});
  CHECK(loader.next().indices == std::vector<std::int64_t>{2, 3});
  REQUIRE_THROWS_WITH(loader.next(), Catch::Contains("example 5 is broken"));
  CHECK(loader.state() == LoaderState{0, 4});  // the position did not move
  REQUIRE_THROWS_AS(loader.next(), ValueError);  // and it fails again, not silently skipped
  loader.load_state({0, 6});
  const Batch b = loader.next();
  CHECK(b.indices == std::vector<std::int64_t>{6, 7});
  CHECK(b.inputs.to_vector<double>() == std::vector<double>{6, 7});
  CHECK(b.inputs.shape() == Shape{2});
}

TEST_CASE("DataLoader: shards are disjoint, equal in size, and cover the order", "[data][dataloader]") {
  auto data = numbered_dataset(11);
  const auto options = DataLoaderOptions().batch_size(2).shuffle(true).seed(4);
  std::vector<std::int64_t> all;
  for (std::int64_t rank = 0; rank < 3; ++rank) {
    DataLoader loader(data, options);
    loader.shard(rank, 3);
    CHECK(loader.examples_per_epoch() == 3);  // 11 / 3
    CHECK(loader.batches_per_epoch() == 2);
    const auto epoch0 = flatten(take(loader, 2));
    CHECK(epoch0.size() == 3);
    all.insert(all.end(), epoch0.begin(), epoch0.end());
    CHECK(loader.state() == LoaderState{1, 0});
  }
  const auto order = epoch_order(11, true, 4, 0);
  CHECK(all == std::vector<std::int64_t>(order.begin(), order.begin() + 9));
  std::set<std::int64_t> unique(all.begin(), all.end());
  CHECK(unique.size() == 9);

  DataLoader loader(data, options);
  REQUIRE_THROWS_WITH(loader.shard(3, 3), Catch::Contains("expected 0 <= rank < world_size"));
  REQUIRE_THROWS_AS(loader.shard(0, 0), ValueError);
}

TEST_CASE("DataLoader: argument errors", "[data][dataloader]") {
  REQUIRE_THROWS_WITH(DataLoader(nullptr), Catch::Contains("the dataset is null"));
  REQUIRE_THROWS_WITH(DataLoader(numbered_dataset(3), DataLoaderOptions().batch_size(0)),
                      Catch::Contains("batch_size must be >= 1, got 0"));
}

TEST_CASE("TensorDataset: rows, copies, errors", "[data][dataset]") {
  Tensor x = tensor({1, 2, 3, 4, 5, 6}, {3, 2}, DType::float64);
  Tensor y = tensor({7, 8, 9}, {3}, DType::int64);
  TensorDataset data(x, y);
  CHECK(data.size() == 3);
  const Example e = data.get(1);
  CHECK(e.input.shape() == Shape{2});
  CHECK(e.input.to_vector<double>() == std::vector<double>{3, 4});
  CHECK(e.target.shape() == Shape{});
  CHECK(e.target.item() == 8);
  x.fill_(0);  // the dataset holds its own copy
  CHECK(data.get(2).input.to_vector<double>() == std::vector<double>{5, 6});
  const std::int64_t idx[] = {2, 0, 2};
  const Batch b = data.get_batch(idx);
  CHECK(b.inputs.to_vector<double>() == std::vector<double>{5, 6, 1, 2, 5, 6});
  CHECK(b.targets.to_vector<std::int64_t>() == std::vector<std::int64_t>{9, 7, 9});
  // The default get_batch (stacking get()) gives the same.
  const Batch stacked = data.Dataset::get_batch(idx);
  CHECK(stacked.inputs.to_vector<double>() == b.inputs.to_vector<double>());
  CHECK(stacked.targets.shape() == Shape{3});

  REQUIRE_THROWS_WITH(data.get(3), Catch::Contains("TensorDataset.get: index 3 is out of range for 3 examples"));
  const std::int64_t bad[] = {0, -1};
  REQUIRE_THROWS_AS(data.get_batch(bad), ValueError);
  REQUIRE_THROWS_WITH(TensorDataset(zeros({3, 2}), zeros({4})),
                      Catch::Contains("[3, 2]") && Catch::Contains("[4]") && Catch::Contains("same first dim"));
  REQUIRE_THROWS_AS(TensorDataset(scalar_tensor(1), zeros({1})), ShapeError);
}

TEST_CASE("collate stacks examples and names the one that differs", "[data][dataset]") {
  std::vector<Example> ex = {{tensor({1, 2}, {2}), scalar_tensor(0, DType::int64)},
                             {tensor({3, 4}, {2}), scalar_tensor(1, DType::int64)}};
  const Batch b = collate(ex);
  CHECK(b.inputs.shape() == Shape{2, 2});
  CHECK(b.inputs.to_vector<float>() == std::vector<float>{1, 2, 3, 4});
  CHECK(b.targets.to_vector<std::int64_t>() == std::vector<std::int64_t>{0, 1});
  // A non-contiguous input is copied in logical order.
  ex[1].input = tensor({5, 6}, {2, 1}).transpose(0, 1).reshape({2});
  CHECK(collate(ex).inputs.to_vector<float>() == std::vector<float>{1, 2, 5, 6});

  ex[1].input = tensor({1, 2, 3}, {3});
  REQUIRE_THROWS_AS(collate(ex), ShapeError);
  REQUIRE_THROWS_WITH(collate(ex), Catch::Contains("input of example 1 has shape [3], example 0 has [2]"));
  ex[1].input = tensor({1, 2}, {2}, DType::float64);
  REQUIRE_THROWS_AS(collate(ex), DTypeError);
  REQUIRE_THROWS_WITH(collate(ex), Catch::Contains("example 1 is float64, example 0 is float32"));
  REQUIRE_THROWS_WITH(collate(std::vector<Example>{}), Catch::Contains("no examples"));
}
