// synthetic.cpp — Vocab, the symbol tasks, modular addition and the collate functions.
// The translation task and grammar_text are in translation.cpp.
#include "synthetic.hpp"

#include <algorithm>

namespace tapegrad::data {

// ---------------------------------------------------------------- Vocab

Vocab::Vocab(const std::vector<std::string>& words) {
  words_ = {"<pad>", "<bos>", "<eos>", "<sep>"};
  words_.insert(words_.end(), words.begin(), words.end());
  for (std::size_t i = 0; i < words_.size(); ++i)
    if (!ids_.emplace(words_[i], static_cast<std::int64_t>(i)).second)
      throw ValueError("Vocab: the word '" + words_[i] + "' appears twice");
}

const std::string& Vocab::word(std::int64_t id) const {
  if (id < 0 || id >= size())
    throw ValueError("Vocab.word: id " + std::to_string(id) + " is outside [0, " + std::to_string(size()) + ")");
  return words_[static_cast<std::size_t>(id)];
}

std::int64_t Vocab::id(std::string_view word) const {
  const auto it = ids_.find(std::string(word));
  if (it == ids_.end()) throw ValueError("Vocab.id: '" + std::string(word) + "' is not in the vocabulary");
  return it->second;
}

std::vector<std::int64_t> Vocab::ids(const std::vector<std::string>& words) const {
  std::vector<std::int64_t> out;
  for (const std::string& w : words) out.push_back(id(w));
  return out;
}

std::string Vocab::join(std::span<const std::int64_t> ids) const {
  std::string out;
  for (std::size_t i = 0; i < ids.size(); ++i) out += (i ? " " : "") + word(ids[i]);
  return out;
}

// ---------------------------------------------------------------- tasks

std::vector<SeqPair> SyntheticTask::sample(std::int64_t n, Generator& gen) const {
  if (n < 0) throw ValueError(name() + " task: cannot sample " + std::to_string(n) + " pairs");
  std::vector<SeqPair> pairs;
  pairs.reserve(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i) pairs.push_back(sample(gen));
  return pairs;
}

std::vector<SeqPair> SyntheticTask::generate(std::int64_t n, std::uint64_t seed) const {
  Generator gen(seed);
  return sample(n, gen);
}

namespace {

// The vocabulary of a SymbolTask, after checking its settings.
Vocab symbol_vocab(std::int64_t num_symbols, std::int64_t min_len, std::int64_t max_len) {
  if (num_symbols < 1 || min_len < 1 || max_len < min_len)
    throw ValueError("SymbolTask: expected num_symbols >= 1 and 1 <= min_len <= max_len, got " +
                     std::to_string(num_symbols) + ", " + std::to_string(min_len) + ", " +
                     std::to_string(max_len));
  std::vector<std::string> names;
  for (std::int64_t i = 0; i < num_symbols; ++i)
    names.push_back(num_symbols <= 26 ? std::string(1, static_cast<char>('a' + i)) : "s" + std::to_string(i));
  return Vocab(names);
}

}  // namespace

SymbolTask::SymbolTask(std::int64_t num_symbols, std::int64_t min_len, std::int64_t max_len)
    : SyntheticTask(symbol_vocab(num_symbols, min_len, max_len)),
      num_symbols_(num_symbols),
      min_len_(min_len),
      max_len_(max_len) {}

SeqPair SymbolTask::sample(Generator& gen) const {
  const auto len = min_len_ + static_cast<std::int64_t>(gen.next_below(static_cast<std::uint64_t>(max_len_ - min_len_ + 1)));
  SeqPair pair;
  for (std::int64_t i = 0; i < len; ++i)
    pair.source.push_back(kNumSpecialTokens + static_cast<std::int64_t>(gen.next_below(static_cast<std::uint64_t>(num_symbols_))));
  pair.target = solve(pair.source);
  return pair;
}

void SymbolTask::check_source(std::span<const std::int64_t> source) const {
  const auto len = static_cast<std::int64_t>(source.size());
  if (len < min_len_ || len > max_len_)
    throw ValueError(name() + " task: source length " + std::to_string(len) + " is outside [" +
                     std::to_string(min_len_) + ", " + std::to_string(max_len_) + "]");
  for (std::size_t i = 0; i < source.size(); ++i)
    if (source[i] < kNumSpecialTokens || source[i] >= vocab_.size())
      throw ValueError(name() + " task: source token " + std::to_string(source[i]) + " at position " +
                       std::to_string(i) + " is not a symbol");
}

std::vector<std::int64_t> CopyTask::solve(std::span<const std::int64_t> source) const {
  check_source(source);
  return {source.begin(), source.end()};
}

std::vector<std::int64_t> ReverseTask::solve(std::span<const std::int64_t> source) const {
  check_source(source);
  return {source.rbegin(), source.rend()};
}

std::vector<std::int64_t> SortTask::solve(std::span<const std::int64_t> source) const {
  check_source(source);
  std::vector<std::int64_t> out(source.begin(), source.end());
  std::sort(out.begin(), out.end());
  return out;
}

namespace {
std::vector<std::string> addition_words(std::int64_t modulus) {
  if (modulus < 2) throw ValueError("ModularAdditionTask: modulus must be >= 2, got " + std::to_string(modulus));
  std::vector<std::string> words = {"+"};
  for (std::int64_t v = 0; v < modulus; ++v) words.push_back(std::to_string(v));
  return words;
}
}  // namespace

ModularAdditionTask::ModularAdditionTask(std::int64_t modulus)
    : SyntheticTask(Vocab(addition_words(modulus))), modulus_(modulus) {}

SeqPair ModularAdditionTask::sample(Generator& gen) const {
  const auto a = static_cast<std::int64_t>(gen.next_below(static_cast<std::uint64_t>(modulus_)));
  const auto b = static_cast<std::int64_t>(gen.next_below(static_cast<std::uint64_t>(modulus_)));
  SeqPair pair;
  pair.source = {number_token(a), kNumSpecialTokens, number_token(b)};
  pair.target = solve(pair.source);
  return pair;
}

std::vector<std::int64_t> ModularAdditionTask::solve(std::span<const std::int64_t> source) const {
  auto is_number = [&](std::int64_t t) { return t >= number_token(0) && t < number_token(modulus_); };
  if (source.size() != 3 || !is_number(source[0]) || source[1] != kNumSpecialTokens || !is_number(source[2]))
    throw ValueError("modular_addition task: the source must be '<number> + <number>', got '" +
                     vocab_.join(source) + "'");
  const std::int64_t a = source[0] - number_token(0), b = source[2] - number_token(0);
  return {number_token((a + b) % modulus_)};
}

// ---------------------------------------------------------------- collate

namespace {

std::int64_t longest(std::span<const SeqPair> pairs, std::vector<std::int64_t> SeqPair::*side) {
  std::size_t n = 0;
  for (const SeqPair& p : pairs) n = std::max(n, (p.*side).size());
  return static_cast<std::int64_t>(n);
}

void check_pairs(const char* op, std::span<const SeqPair> pairs) {
  if (pairs.empty()) throw ValueError(std::string(op) + ": no pairs");
  for (std::size_t i = 0; i < pairs.size(); ++i)
    for (const auto* side : {&pairs[i].source, &pairs[i].target})
      for (std::int64_t t : *side)
        if (t < kNumSpecialTokens)
          throw ValueError(std::string(op) + ": pair " + std::to_string(i) + " holds the special token " +
                           std::to_string(t) + " (pairs hold bare tokens; collate adds the specials)");
}

// (rows, cols) int64 filled with value.
Tensor filled(std::int64_t rows, std::int64_t cols, std::int64_t value) {
  return full({rows, cols}, static_cast<double>(value), DType::int64);
}

}  // namespace

Seq2SeqBatch collate_seq2seq(std::span<const SeqPair> pairs) {
  check_pairs("collate_seq2seq", pairs);
  const auto B = static_cast<std::int64_t>(pairs.size());
  const std::int64_t S = longest(pairs, &SeqPair::source) + 1, T = longest(pairs, &SeqPair::target) + 1;
  Seq2SeqBatch batch{filled(B, S, kPad), filled(B, S, 1), filled(B, T, kPad), filled(B, T, kIgnoreIndex),
                     filled(B, T, 1)};
  std::int64_t *src = batch.src.data<std::int64_t>(), *src_mask = batch.src_pad_mask.data<std::int64_t>();
  std::int64_t *tgt_in = batch.tgt_in.data<std::int64_t>(), *tgt_out = batch.tgt_out.data<std::int64_t>();
  std::int64_t* tgt_mask = batch.tgt_pad_mask.data<std::int64_t>();
  for (std::int64_t b = 0; b < B; ++b) {
    const SeqPair& p = pairs[static_cast<std::size_t>(b)];
    const auto ns = static_cast<std::int64_t>(p.source.size()), nt = static_cast<std::int64_t>(p.target.size());
    for (std::int64_t s = 0; s <= ns; ++s) {
      src[b * S + s] = s < ns ? p.source[static_cast<std::size_t>(s)] : kEos;
      src_mask[b * S + s] = 0;
    }
    for (std::int64_t t = 0; t <= nt; ++t) {
      tgt_in[b * T + t] = t == 0 ? kBos : p.target[static_cast<std::size_t>(t - 1)];
      tgt_out[b * T + t] = t < nt ? p.target[static_cast<std::size_t>(t)] : kEos;
      tgt_mask[b * T + t] = 0;
    }
  }
  return batch;
}

LMBatch collate_lm(std::span<const SeqPair> pairs) {
  check_pairs("collate_lm", pairs);
  const auto B = static_cast<std::int64_t>(pairs.size());
  // BOS source SEP target EOS has ns + nt + 3 tokens; inputs and targets have one less.
  std::int64_t T = 0;
  for (const SeqPair& p : pairs) T = std::max<std::int64_t>(T, static_cast<std::int64_t>(p.source.size() + p.target.size()) + 2);
  LMBatch batch{filled(B, T, kPad), filled(B, T, kIgnoreIndex), filled(B, T, 1)};
  std::int64_t *x = batch.inputs.data<std::int64_t>(), *y = batch.targets.data<std::int64_t>();
  std::int64_t* mask = batch.pad_mask.data<std::int64_t>();
  std::vector<std::int64_t> seq;
  for (std::int64_t b = 0; b < B; ++b) {
    const SeqPair& p = pairs[static_cast<std::size_t>(b)];
    seq = {kBos};
    seq.insert(seq.end(), p.source.begin(), p.source.end());
    const auto sep = static_cast<std::int64_t>(seq.size());
    seq.push_back(kSep);
    seq.insert(seq.end(), p.target.begin(), p.target.end());
    seq.push_back(kEos);
    for (std::int64_t t = 0; t + 1 < static_cast<std::int64_t>(seq.size()); ++t) {
      x[b * T + t] = seq[static_cast<std::size_t>(t)];
      mask[b * T + t] = 0;
      // Position t predicts seq[t + 1]: count it only when that is part of the answer.
      if (t + 1 > sep) y[b * T + t] = seq[static_cast<std::size_t>(t + 1)];
    }
  }
  return batch;
}

}  // namespace tapegrad::data
