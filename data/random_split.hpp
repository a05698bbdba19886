// random_split.hpp — a dataset cut into disjoint parts at random, as torch.utils.data.random_split:
//
//   auto parts = data::random_split(dataset, {900, 100}, /*seed=*/42);   // or {0.9, 0.1}
//   DataLoader train(parts[0], DataLoaderOptions().batch_size(32).shuffle(true)), val(parts[1]);
//
// Each part is a Subset: a view of the dataset through a list of its indices (nothing is
// copied). The parts come from one shuffle of 0..N-1 (epoch_order's, from the seed): the same
// seed gives the same split.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "dataset.hpp"

namespace tapegrad::data {

// Example i is dataset[indices[i]], as torch.utils.data.Subset.
class Subset : public Dataset {
 public:
  // Throws ValueError when an index lies outside the dataset.
  Subset(std::shared_ptr<const Dataset> dataset, std::vector<std::int64_t> indices);
  std::int64_t size() const override { return static_cast<std::int64_t>(indices_.size()); }
  Example get(std::int64_t index) const override;
  Batch get_batch(std::span<const std::int64_t> indices) const override;
  const std::vector<std::int64_t>& indices() const { return indices_; }

 private:
  std::shared_ptr<const Dataset> dataset_;
  std::vector<std::int64_t> indices_;
};

// Parts of the given sizes, as torch's random_split reads them: whole numbers that add up to
// the dataset's size are lengths ({900, 100}); numbers that add up to 1 are fractions ({0.9,
// 0.1}), each part floor(fraction·N) examples and the remainder dealt one by one to the parts
// in order. Anything else is refused, naming the sum. (One function, not two overloads: a
// braced list of ints would fit both.)
std::vector<std::shared_ptr<Subset>> random_split(std::shared_ptr<const Dataset> dataset, const std::vector<double>& sizes,
                                                  std::uint64_t seed);

}  // namespace tapegrad::data
