// test_random_split.cpp — data::random_split and Subset (data/random_split.hpp), and a
// DataLoader's epoch as a range (for (Batch& b : loader)), PyTorch's two first data idioms.
#include <algorithm>
#include <set>

#include "data_helpers.hpp"

using namespace tapegrad;
using namespace tapegrad::data;
using Catch::Matchers::Contains;
using tapegrad::testing::numbered_dataset;

namespace {

std::vector<std::int64_t> rows_of(const Dataset& d) {
  std::vector<std::int64_t> rows;
  for (std::int64_t i = 0; i < d.size(); ++i) rows.push_back(static_cast<std::int64_t>(d.get(i).input.to_vector()[0]));
  return rows;
}

}  // namespace

TEST_CASE("random_split: disjoint parts of the given lengths that cover the dataset, the same for a seed", "[data][split]") {
  const auto dataset = numbered_dataset(10);
  const auto parts = random_split(dataset, {7, 3}, 42);
  REQUIRE(parts.size() == 2);
  CHECK(parts[0]->size() == 7);
  CHECK(parts[1]->size() == 3);
  std::vector<std::int64_t> all = rows_of(*parts[0]), second = rows_of(*parts[1]);
  all.insert(all.end(), second.begin(), second.end());
  std::sort(all.begin(), all.end());
  CHECK(all == std::vector<std::int64_t>{0, 1, 2, 3, 4, 5, 6, 7, 8, 9});
  CHECK(rows_of(*random_split(dataset, {7, 3}, 42)[0]) == rows_of(*parts[0]));
  CHECK(rows_of(*random_split(dataset, {7, 3}, 43)[0]) != rows_of(*parts[0]));
  // a batch of a part is the dataset's batch of the rows it maps to
  const Batch b = parts[1]->get_batch(std::vector<std::int64_t>{2, 0});
  CHECK(b.inputs.select(1, 0).to_vector() == std::vector<double>{static_cast<double>(second[2]), static_cast<double>(second[0])});
}

TEST_CASE("random_split: fractions, the remainder dealt in order, and refusals", "[data][split]") {
  const auto parts = random_split(numbered_dataset(10), {0.45, 0.45, 0.1}, 1);
  // floor(4.5), floor(4.5), floor(1) = 4, 4, 1, and the one example left goes to the first part
  CHECK(parts[0]->size() == 5);
  CHECK(parts[1]->size() == 4);
  CHECK(parts[2]->size() == 1);
  CHECK_THROWS_WITH(random_split(numbered_dataset(10), {7, 4}, 1),
                    Contains("the sizes add up to 11") && Contains("lengths that add up to the 10 examples"));
  CHECK_THROWS_WITH(random_split(numbered_dataset(10), {0.5, -0.5, 1}, 1), Contains("a size below 0"));
  CHECK_THROWS_WITH(parts[2]->get(1), Contains("Subset: index 1 is outside the subset"));
}

TEST_CASE("for (Batch& b : loader) runs one epoch, and the next loop the next epoch", "[data][loader]") {
  DataLoader loader(numbered_dataset(10), DataLoaderOptions().batch_size(4).shuffle(true).seed(3));
  std::vector<std::int64_t> seen;
  int batches = 0;
  for (Batch& batch : loader) {
    ++batches;
    for (std::int64_t i : batch.indices) seen.push_back(i);
    CHECK(batch.epoch == 0);
  }
  CHECK(batches == 3);  // 4 + 4 + 2
  std::sort(seen.begin(), seen.end());
  CHECK(seen == std::vector<std::int64_t>{0, 1, 2, 3, 4, 5, 6, 7, 8, 9});
  CHECK(loader.state() == LoaderState{1, 0});
  int second = 0;
  for (const Batch& batch : loader) second += batch.epoch == 1;
  CHECK(second == 3);
  // resumed mid-epoch, the loop runs the rest of that epoch
  loader.load_state({5, 4});
  int rest = 0;
  for ([[maybe_unused]] Batch& batch : loader) ++rest;
  CHECK(rest == 2);
  // drop_last leaving no batch: the loop runs nothing (next() would refuse)
  DataLoader none(numbered_dataset(3), DataLoaderOptions().batch_size(4).drop_last(true));
  int count = 0;
  for ([[maybe_unused]] Batch& batch : none) ++count;
  CHECK(count == 0);
}
