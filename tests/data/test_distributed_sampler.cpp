// test_distributed_sampler.cpp — the data side of data-parallel training, without MPI: the
// shards of every global batch are disjoint, equal in size and cover it, in the order a
// single process would see it; they depend only on (seed, epoch); shard_of cuts the rows of a
// batch drawn at random.
#include <algorithm>
#include <numeric>
#include <set>

#include "data_helpers.hpp"

using namespace tapegrad;
using namespace tapegrad::data;
using tapegrad::testing::numbered_dataset;

TEST_CASE("shard_rows: equal slices in rank order, and clear errors", "[data][distributed]") {
  CHECK(shard_rows(12, 0, 3).begin == 0);
  CHECK(shard_rows(12, 0, 3).end == 4);
  CHECK(shard_rows(12, 2, 3).begin == 8);
  CHECK(shard_rows(12, 2, 3).size() == 4);
  CHECK(shard_rows(5, 0, 1).size() == 5);
  REQUIRE_THROWS_WITH(shard_rows(10, 0, 4), Catch::Contains("does not split into 4 equal shards"));
  REQUIRE_THROWS_WITH(shard_rows(8, 4, 4), Catch::Contains("rank 4 is not in [0, world_size = 4)"));
  REQUIRE_THROWS_AS(shard_rows(8, -1, 4), ValueError);
  REQUIRE_THROWS_AS(shard_rows(8, 0, 0), ValueError);
}

TEST_CASE("DistributedSampler: the shards of each global batch are disjoint and cover it", "[data][distributed]") {
  const auto dataset = numbered_dataset(50);
  const std::int64_t B = 12, W = 4;
  const DistributedSampler whole(dataset->size(), B, 0, 1, /*seed=*/7);
  CHECK(whole.batches_per_epoch() == 4);  // 50 / 12: the last 2 examples are skipped
  for (std::int64_t epoch = 0; epoch < 2; ++epoch) {
    std::set<std::int64_t> epoch_seen;
    for (std::int64_t i = 0; i < whole.batches_per_epoch(); ++i) {
      // Rank r's rows, one after the other, are the single-process global batch.
      std::vector<std::int64_t> joined;
      for (std::int64_t r = 0; r < W; ++r) {
        const DistributedSampler sampler(dataset->size(), B, r, W, 7);
        REQUIRE(sampler.local_batch() == 3);
        REQUIRE(sampler.batches_per_epoch() == whole.batches_per_epoch());
        const Batch b = sampler.batch(*dataset, epoch, i);
        CHECK(b.epoch == epoch);
        CHECK(b.indices == sampler.indices(epoch, i));
        CHECK(b.targets.to_vector<std::int64_t>() == b.indices);  // rows match their indices
        joined.insert(joined.end(), b.indices.begin(), b.indices.end());
      }
      CHECK(joined == whole.indices(epoch, i));
      CHECK(joined == whole.global_indices(epoch, i));
      for (std::int64_t index : joined) CHECK(epoch_seen.insert(index).second);  // never twice in an epoch
    }
    CHECK(epoch_seen.size() == 48);
  }
}

TEST_CASE("DistributedSampler: the order is a function of seed and epoch only", "[data][distributed]") {
  const DistributedSampler a(100, 10, 1, 2, 3), b(100, 10, 1, 2, 3), other_seed(100, 10, 1, 2, 4);
  // Asked in any order, the same (epoch, batch) gives the same rows.
  const auto e1 = a.indices(1, 5);
  CHECK(a.indices(0, 2) == b.indices(0, 2));
  CHECK(b.indices(1, 5) == e1);
  CHECK(a.indices(1, 5) == e1);
  CHECK(a.global_indices(0, 0) != a.global_indices(1, 0));        // a new order each epoch
  CHECK(a.global_indices(0, 0) != other_seed.global_indices(0, 0));  // and each seed
  // The epochs are those of the DataLoader: epoch_order(n, shuffle, seed, epoch).
  const auto order = epoch_order(100, true, 3, 1);
  CHECK(a.global_indices(1, 5) == std::vector<std::int64_t>(order.begin() + 50, order.begin() + 60));
  // Without shuffling: 0, 1, 2, ...
  const DistributedSampler plain(100, 10, 1, 2, 3, /*shuffle=*/false);
  CHECK(plain.indices(0, 1) == std::vector<std::int64_t>{15, 16, 17, 18, 19});
}

TEST_CASE("DistributedSampler: bad arguments", "[data][distributed]") {
  REQUIRE_THROWS_WITH(DistributedSampler(100, 10, 0, 3, 0), Catch::Contains("does not split into 3 equal shards"));
  REQUIRE_THROWS_WITH(DistributedSampler(5, 10, 0, 2, 0), Catch::Contains("fewer than one global batch of 10"));
  const DistributedSampler s(100, 10, 0, 2, 0);
  REQUIRE_THROWS_WITH(s.indices(0, 10), Catch::Contains("batch 10 is not in [0, 10)"));
  REQUIRE_THROWS_AS(s.indices(-1, 0), ValueError);
}

TEST_CASE("shard_of: rank r keeps rows r·b up to (r+1)·b of a batch drawn at random", "[data][distributed]") {
  std::vector<TokenId> tokens(500);
  std::iota(tokens.begin(), tokens.end(), 0);
  const TokenStream stream(tokens, 0.1);
  Generator gen(5);
  const Batch global = stream.sample_batch(Split::train, 6, 4, gen);
  const auto inputs = global.inputs.to_vector<std::int64_t>();
  const auto targets = global.targets.to_vector<std::int64_t>();
  for (std::int64_t r = 0; r < 3; ++r) {
    const Batch mine = shard_of(global, r, 3);
    REQUIRE(mine.inputs.shape() == Shape{2, 4});
    CHECK(mine.inputs.is_contiguous());
    CHECK(mine.inputs.to_vector<std::int64_t>() ==
          std::vector<std::int64_t>(inputs.begin() + 8 * r, inputs.begin() + 8 * (r + 1)));
    CHECK(mine.targets.to_vector<std::int64_t>() ==
          std::vector<std::int64_t>(targets.begin() + 8 * r, targets.begin() + 8 * (r + 1)));
    CHECK(mine.indices == std::vector<std::int64_t>(global.indices.begin() + 2 * r, global.indices.begin() + 2 * (r + 1)));
  }
  REQUIRE_THROWS_WITH(shard_of(global, 0, 4), Catch::Contains("does not split into 4 equal shards"));
}
