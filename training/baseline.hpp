// baseline.hpp — the unigram baseline every language-model report quotes.
//
// The unigram model of some tokens, add-one smoothed: p(v) = (count(v) + 1) / (n + V), so no
// token has probability 0. Its cross-entropy on held-out tokens is what a model that ignores
// the context reaches: a model that does not get below it has learned nothing useful.
#pragma once

#include <cmath>
#include <cstdint>
#include <vector>

namespace tapegrad::training {

class Unigram {
 public:
  explicit Unigram(std::int64_t vocab_size) : counts_(static_cast<std::size_t>(vocab_size), 1.0), total_(double(vocab_size)) {}
  void add(std::int64_t token) { counts_.at(static_cast<std::size_t>(token)) += 1, total_ += 1; }
  template <typename Tokens>
  void add_all(const Tokens& tokens) {
    for (auto t : tokens) add(t);
  }
  // −mean log p(t) over the tokens (nats per token).
  template <typename Tokens>
  double cross_entropy(const Tokens& tokens) const {
    double nll = 0, n = 0;
    for (auto t : tokens) nll -= std::log(counts_.at(static_cast<std::size_t>(t)) / total_), n += 1;
    return nll / n;
  }

 private:
  std::vector<double> counts_;
  double total_;
};

}  // namespace tapegrad::training
