// text_corpus.hpp — text for language-model training: a Corpus of memory-mapped files, the
// default corpus found on every Debian machine, and a TokenStream that serves (x, y) windows
// for next-token prediction from a train split and a validation split.
//
//   Corpus corpus = Corpus::default_corpus();              // licence texts, mapped read-only
//   auto tok = BpeTokenizer::train(corpus.texts(), 512);
//   TokenStream stream(corpus, tok, /*val_fraction=*/0.1);
//   Generator gen(0);
//   Batch b = stream.sample_batch(Split::train, /*B=*/8, /*T=*/64, gen);   // inputs, targets: int64 (8, 64)
//   for (auto it = stream.windows(Split::val, 8, 64); it.next(b);) { ... }  // evaluation
//
// Nothing is ever downloaded. The tokens are held in memory (4 bytes each); the text is not:
// it is read from the mappings while it is encoded.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "../autograd/random.hpp"
#include "dataset.hpp"
#include "mapped_file.hpp"
#include "tokenizer.hpp"

namespace tapegrad::data {

// The licence texts under /usr/share/common-licenses (GPL-3, Apache-2.0, ... on Debian), as
// sorted, de-duplicated real paths (GPL -> GPL-3 counts once). Empty when there are none.
std::vector<std::string> default_corpus_paths();

// Bytes of the fallback corpus: sentences of the translation task's source grammar.
inline constexpr std::int64_t kFallbackCorpusBytes = 256 * 1024;

// Texts read through read-only memory mappings (or one owned string). Movable; the views of
// texts() stay valid while the Corpus lives, also after it is moved.
class Corpus {
 public:
  // Maps each file. Throws io::IoError naming a missing, empty or unreadable file, and
  // ValueError for an empty list.
  static Corpus from_files(const std::vector<std::string>& paths);
  static Corpus from_text(std::string text, std::string name = "<text>");
  // The files of default_corpus_paths() in that order, or when there are none,
  // grammar_text(kFallbackCorpusBytes, 0) (synthetic.hpp): the same text on every machine.
  static Corpus default_corpus();

  std::vector<std::string_view> texts() const;
  // One name per text: the file path, or the name given to from_text.
  const std::vector<std::string>& names() const { return names_; }
  std::int64_t num_bytes() const;

 private:
  Corpus() = default;
  std::vector<MappedFile> files_;
  std::shared_ptr<const std::string> owned_;
  std::vector<std::string> names_;
};

enum class Split { train, val };
const char* split_name(Split split);

class WindowIterator;

// One token sequence, cut once into train = tokens[0, n - n_val) and val = tokens[n - n_val, n)
// with n_val = floor(n · val_fraction): a split at a token boundary, the validation text last.
class TokenStream {
 public:
  // Encodes each text of the corpus and concatenates the tokens, in order.
  TokenStream(const Corpus& corpus, const Tokenizer& tokenizer, double val_fraction = 0.1);
  TokenStream(std::vector<TokenId> tokens, double val_fraction = 0.1);

  std::int64_t num_tokens() const { return static_cast<std::int64_t>(tokens_.size()); }
  std::int64_t size(Split split) const { return static_cast<std::int64_t>(tokens(split).size()); }
  std::span<const TokenId> tokens(Split split) const;

  // B windows of T + 1 tokens at starts drawn uniformly from [0, size - T - 1] (B draws of
  // gen.next_below): inputs = window[:-1], targets = window[1:], both int64 (B, T).
  // batch.indices holds the starts. Throws ValueError when the split is shorter than T + 1.
  Batch sample_batch(Split split, std::int64_t B, std::int64_t T, Generator& gen) const;
  // Every non-overlapping window in order (starts 0, T, 2T, ... with start + T + 1 <= size),
  // B per batch, the last batch possibly smaller. Deterministic: for evaluation. The
  // iterator reads this stream's tokens: keep the stream alive while it is used.
  WindowIterator windows(Split split, std::int64_t B, std::int64_t T) const;

 private:
  void split(double val_fraction);

  std::vector<TokenId> tokens_;
  std::int64_t train_size_ = 0;
};

class WindowIterator {
 public:
  WindowIterator(std::span<const TokenId> tokens, std::int64_t B, std::int64_t T);
  // Fills `batch` (inputs, targets: int64 (b, T) with b <= B; indices: window starts) and
  // returns true, or returns false after the last window.
  bool next(Batch& batch);
  void reset() { next_window_ = 0; }
  std::int64_t num_windows() const { return num_windows_; }
  std::int64_t num_batches() const { return (num_windows_ + B_ - 1) / B_; }

 private:
  std::span<const TokenId> tokens_;
  std::int64_t B_, T_, num_windows_, next_window_ = 0;
};

// The windows of a split as a Dataset, for a DataLoader (shuffled epochs, a resumable
// position, prefetch): example i is the window starting at i·T, input = tokens[iT, iT + T),
// target = tokens[iT + 1, iT + T + 1), both int64 (T). size() = (n - 1) / T.
class TokenWindowDataset : public Dataset {
 public:
  TokenWindowDataset(std::shared_ptr<const TokenStream> stream, Split split, std::int64_t T);
  std::int64_t size() const override { return size_; }
  Example get(std::int64_t index) const override;
  Batch get_batch(std::span<const std::int64_t> indices) const override;

 private:
  std::shared_ptr<const TokenStream> stream_;
  std::span<const TokenId> tokens_;
  std::int64_t T_, size_;
};

}  // namespace tapegrad::data
