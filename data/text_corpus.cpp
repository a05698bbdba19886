// text_corpus.cpp — the default corpus, Corpus, TokenStream and its windows.
#include "text_corpus.hpp"

#include <cmath>
#include <filesystem>
#include <set>

#include "synthetic.hpp"

namespace tapegrad::data {

namespace {

// Copies windows of T + 1 tokens starting at `starts` into x = window[:-1], y = window[1:].
Batch windows_at(std::span<const TokenId> tokens, std::span<const std::int64_t> starts, std::int64_t T) {
  const auto B = static_cast<std::int64_t>(starts.size());
  Batch batch;
  batch.inputs = Tensor::empty({B, T}, DType::int64);
  batch.targets = Tensor::empty({B, T}, DType::int64);
  std::int64_t* x = batch.inputs.data<std::int64_t>();
  std::int64_t* y = batch.targets.data<std::int64_t>();
  for (std::int64_t b = 0; b < B; ++b) {
    const TokenId* window = tokens.data() + starts[static_cast<std::size_t>(b)];
    for (std::int64_t t = 0; t < T; ++t) {
      x[b * T + t] = window[t];
      y[b * T + t] = window[t + 1];
    }
  }
  batch.indices.assign(starts.begin(), starts.end());
  return batch;
}

void check_window_args(const char* op, std::int64_t B, std::int64_t T) {
  if (B < 1 || T < 1)
    throw ValueError(std::string(op) + ": B and T must be >= 1, got B = " + std::to_string(B) +
                     ", T = " + std::to_string(T));
}

}  // namespace

std::vector<std::string> default_corpus_paths() {
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::path dir("/usr/share/common-licenses");
  std::set<std::string> paths;  // sorted and unique
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    std::error_code entry_ec;
    // Follows symbolic links: GPL -> GPL-3 resolves to GPL-3, which is then listed once.
    if (!fs::is_regular_file(entry.path(), entry_ec) || fs::file_size(entry.path(), entry_ec) == 0)
      continue;
    const fs::path real = fs::canonical(entry.path(), entry_ec);
    if (!entry_ec) paths.insert(real.string());
  }
  return {paths.begin(), paths.end()};
}

// ---------------------------------------------------------------- Corpus

Corpus Corpus::from_files(const std::vector<std::string>& paths) {
  if (paths.empty()) throw ValueError("Corpus::from_files: no files given");
  Corpus corpus;
  for (const std::string& path : paths) {
    corpus.files_.emplace_back(path);
    corpus.names_.push_back(path);
  }
  return corpus;
}

Corpus Corpus::from_text(std::string text, std::string name) {
  Corpus corpus;
  corpus.owned_ = std::make_shared<const std::string>(std::move(text));
  corpus.names_.push_back(std::move(name));
  return corpus;
}

Corpus Corpus::default_corpus() {
  const std::vector<std::string> paths = default_corpus_paths();
  if (!paths.empty()) return from_files(paths);
  return from_text(grammar_text(kFallbackCorpusBytes, 0), "<grammar text>");
}

std::vector<std::string_view> Corpus::texts() const {
  std::vector<std::string_view> out;
  for (const MappedFile& f : files_) out.push_back(f.bytes());
  if (owned_) out.emplace_back(*owned_);
  return out;
}

std::int64_t Corpus::num_bytes() const {
  std::int64_t n = 0;
  for (std::string_view text : texts()) n += static_cast<std::int64_t>(text.size());
  return n;
}

// ---------------------------------------------------------------- TokenStream

const char* split_name(Split split) { return split == Split::train ? "train" : "val"; }

TokenStream::TokenStream(const Corpus& corpus, const Tokenizer& tokenizer, double val_fraction) {
  for (std::string_view text : corpus.texts()) {
    const std::vector<TokenId> ids = tokenizer.encode(text);
    tokens_.insert(tokens_.end(), ids.begin(), ids.end());
  }
  split(val_fraction);
}

TokenStream::TokenStream(std::vector<TokenId> tokens, double val_fraction) : tokens_(std::move(tokens)) {
  split(val_fraction);
}

void TokenStream::split(double val_fraction) {
  if (!(val_fraction >= 0.0 && val_fraction < 1.0))
    throw ValueError("TokenStream: val_fraction must be in [0, 1), got " + std::to_string(val_fraction));
  if (tokens_.empty()) throw ValueError("TokenStream: there are no tokens (the text is empty)");
  const auto n = static_cast<std::int64_t>(tokens_.size());
  train_size_ = n - static_cast<std::int64_t>(std::floor(static_cast<double>(n) * val_fraction));
}

std::span<const TokenId> TokenStream::tokens(Split split) const {
  const std::span<const TokenId> all(tokens_);
  return split == Split::train ? all.first(static_cast<std::size_t>(train_size_))
                               : all.subspan(static_cast<std::size_t>(train_size_));
}

Batch TokenStream::sample_batch(Split split, std::int64_t B, std::int64_t T, Generator& gen) const {
  check_window_args("TokenStream.sample_batch", B, T);
  const std::span<const TokenId> source = tokens(split);
  const auto n = static_cast<std::int64_t>(source.size());
  if (n < T + 1)
    throw ValueError("TokenStream.sample_batch: the " + std::string(split_name(split)) + " split has " +
                     std::to_string(n) + " tokens, too few for a window of T + 1 = " +
                     std::to_string(T + 1));
  std::vector<std::int64_t> starts(static_cast<std::size_t>(B));
  for (std::int64_t& s : starts) s = static_cast<std::int64_t>(gen.next_below(static_cast<std::uint64_t>(n - T)));
  return windows_at(source, starts, T);
}

WindowIterator TokenStream::windows(Split split, std::int64_t B, std::int64_t T) const {
  return WindowIterator(tokens(split), B, T);
}

WindowIterator::WindowIterator(std::span<const TokenId> tokens, std::int64_t B, std::int64_t T)
    : tokens_(tokens), B_(B), T_(T) {
  check_window_args("WindowIterator", B, T);
  // Windows need T + 1 tokens; consecutive windows share one token (y's last is x's next first).
  num_windows_ = tokens.empty() ? 0 : (static_cast<std::int64_t>(tokens.size()) - 1) / T;
}

bool WindowIterator::next(Batch& batch) {
  if (next_window_ >= num_windows_) return false;
  const std::int64_t count = std::min(B_, num_windows_ - next_window_);
  std::vector<std::int64_t> starts(static_cast<std::size_t>(count));
  for (std::int64_t i = 0; i < count; ++i) starts[static_cast<std::size_t>(i)] = (next_window_ + i) * T_;
  batch = windows_at(tokens_, starts, T_);
  next_window_ += count;
  return true;
}

// ---------------------------------------------------------------- TokenWindowDataset

TokenWindowDataset::TokenWindowDataset(std::shared_ptr<const TokenStream> stream, Split split, std::int64_t T)
    : stream_(std::move(stream)), T_(T) {
  if (!stream_) throw ValueError("TokenWindowDataset: the stream is null");
  check_window_args("TokenWindowDataset", 1, T);
  tokens_ = stream_->tokens(split);
  size_ = tokens_.empty() ? 0 : (static_cast<std::int64_t>(tokens_.size()) - 1) / T;
}

Example TokenWindowDataset::get(std::int64_t index) const {
  const std::int64_t one[] = {index};
  Batch b = get_batch(one);
  return {b.inputs.reshape({T_}), b.targets.reshape({T_})};
}

Batch TokenWindowDataset::get_batch(std::span<const std::int64_t> indices) const {
  std::vector<std::int64_t> starts;
  starts.reserve(indices.size());
  for (std::int64_t i : indices) {
    if (i < 0 || i >= size_)
      throw ValueError("TokenWindowDataset.get: index " + std::to_string(i) + " is out of range for " +
                       std::to_string(size_) + " windows");
    starts.push_back(i * T_);
  }
  Batch batch = windows_at(tokens_, starts, T_);
  batch.indices.clear();  // the loader fills in dataset indices
  return batch;
}

}  // namespace tapegrad::data
