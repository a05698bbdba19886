// random_split.cpp — Subset and random_split (random_split.hpp).
#include "random_split.hpp"

#include <cmath>
#include <string>

#include "../autograd/errors.hpp"
#include "dataloader.hpp"

namespace tapegrad::data {

Subset::Subset(std::shared_ptr<const Dataset> dataset, std::vector<std::int64_t> indices)
    : dataset_(std::move(dataset)), indices_(std::move(indices)) {
  const std::int64_t n = dataset_->size();
  for (std::int64_t i : indices_)
    if (i < 0 || i >= n)
      throw ValueError("Subset: index " + std::to_string(i) + " is outside the dataset of " + std::to_string(n) + " examples");
}

Example Subset::get(std::int64_t index) const {
  if (index < 0 || index >= size())
    throw ValueError("Subset: index " + std::to_string(index) + " is outside the subset of " + std::to_string(size()) +
                     " examples");
  return dataset_->get(indices_[static_cast<std::size_t>(index)]);
}

Batch Subset::get_batch(std::span<const std::int64_t> indices) const {
  std::vector<std::int64_t> mapped;
  mapped.reserve(indices.size());
  for (std::int64_t i : indices) {
    if (i < 0 || i >= size())
      throw ValueError("Subset: index " + std::to_string(i) + " is outside the subset of " + std::to_string(size()) +
                       " examples");
    mapped.push_back(indices_[static_cast<std::size_t>(i)]);
  }
  return dataset_->get_batch(mapped);  // the dataset's own fast path, if it has one
}

namespace {

// What a list of sizes means for n examples: the lengths themselves, or fractions of n.
std::vector<std::int64_t> lengths_of(const std::vector<double>& sizes, std::int64_t n) {
  double sum = 0;
  bool whole = true;
  for (double s : sizes) {
    if (!(s >= 0)) throw ValueError("random_split: a size below 0, " + std::to_string(s));
    sum += s;
    whole = whole && s == std::floor(s);
  }
  std::vector<std::int64_t> lengths;
  if (whole && sum == static_cast<double>(n)) {
    for (double s : sizes) lengths.push_back(static_cast<std::int64_t>(s));
    return lengths;
  }
  if (std::abs(sum - 1.0) > 1e-9)
    throw ValueError("random_split: the sizes add up to " + std::to_string(sum) + ": give lengths that add up to the " +
                     std::to_string(n) + " examples, or fractions that add up to 1");
  std::int64_t given = 0;
  for (double f : sizes) {
    lengths.push_back(static_cast<std::int64_t>(std::floor(f * static_cast<double>(n))));
    given += lengths.back();
  }
  for (std::size_t i = 0; given < n; i = (i + 1) % lengths.size(), ++given) ++lengths[i];  // the remainder, round robin
  return lengths;
}

}  // namespace

std::vector<std::shared_ptr<Subset>> random_split(std::shared_ptr<const Dataset> dataset, const std::vector<double>& sizes,
                                                  std::uint64_t seed) {
  const std::int64_t n = dataset->size();
  const std::vector<std::int64_t> order = epoch_order(n, true, seed, 0);
  std::vector<std::shared_ptr<Subset>> parts;
  auto from = order.begin();
  for (std::int64_t l : lengths_of(sizes, n)) {
    parts.push_back(std::make_shared<Subset>(dataset, std::vector<std::int64_t>(from, from + l)));
    from += l;
  }
  return parts;
}

}  // namespace tapegrad::data
