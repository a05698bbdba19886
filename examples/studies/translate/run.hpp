// run.hpp — translate's data and one run: a Seq2SeqTransformer of one placement and depth
// trained on TranslationTask (study::train_run), then scored on the held-out sentences.
#pragma once

#include <cmath>
#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include <tapegrad/tapegrad.hpp>

#include "common/run.hpp"
#include "settings.hpp"

namespace translate {

// The held-out sentences, and training batches that never contain them: exact match on the
// held-out set measures translation of sentences the model has not seen (the task has
// 60·5·60 = 18000 distinct sources, so a few hundred held out leaves plenty to train on).
struct TranslationData {
  tapegrad::data::TranslationTask task;
  std::vector<tapegrad::data::SeqPair> val;
  std::set<std::vector<std::int64_t>> val_sources;

  TranslationData(std::int64_t val_size, std::uint64_t seed);
  std::vector<tapegrad::data::SeqPair> train_batch(std::int64_t n, tapegrad::Generator& gen) const;
  // Cross-entropy of the target-token frequencies (targets and EOS, counted on training
  // pairs) on the held-out targets: the score of a model that ignores the source and the
  // prefix.
  double unigram_baseline(std::uint64_t seed) const;
};

struct Decoding {
  std::string source, expected, decoded;
  bool correct;
};

struct RunResult : study::RunLog {  // steps, training loss, gradient norm, lr, divergence, time
  std::string placement;
  std::int64_t layers = 0;
  std::vector<double> val_loss;  // one per val_steps
  double token_accuracy = NAN, exact_match = NAN;
  std::vector<Decoding> decodings;
};

// "pre L=6": a run in the progress lines and the --check messages.
std::string run_name(const std::string& placement, std::int64_t layers);

// Progress is counted in layer-steps (steps × layers per side): a step costs about its depth.
RunResult train_one(const std::string& placement, std::int64_t layers, const TranslationData& d, const Settings& s,
                    tapegrad::training::Progress& progress);

}  // namespace translate
