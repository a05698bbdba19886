// synthetic.hpp — small tasks with exact answers, generated from a seed, for quick training
// and for encoder-decoder (seq2seq) models: copy, reverse, sort, modular addition, and a toy
// translation between two made-up word orders. Nothing is downloaded.
//
// Every task has one vocabulary for both sides, starting with the special tokens
//   0 <pad>  padding (never a real token)      1 <bos>  begins a decoder input
//   2 <eos>  ends a sequence                    3 <sep>  between prompt and answer (decoder-only)
// A pair holds the bare tokens (no specials); the collate functions add them:
//
//   ReverseTask task(/*num_symbols=*/10, /*min_len=*/1, /*max_len=*/8);
//   Generator gen(0);
//   Seq2SeqBatch b = collate_seq2seq(task.sample(32, gen));
//   logits = model.forward(b.src, b.tgt_in, b.src_pad_mask, b.tgt_pad_mask);
//   loss = cross_entropy(logits.reshape({-1, V}), b.tgt_out.reshape({-1}));   // pads ignored
//
// or, for a decoder-only LM, collate_lm: BOS prompt SEP answer EOS, loss on the answer only.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "../autograd/random.hpp"

namespace tapegrad::data {

inline constexpr std::int64_t kPad = 0, kBos = 1, kEos = 2, kSep = 3;
inline constexpr std::int64_t kNumSpecialTokens = 4;
// Targets equal to this are skipped by cross_entropy (its default ignore_index).
inline constexpr std::int64_t kIgnoreIndex = -100;

// Id <-> word for a task. Ids 0..3 are the special tokens above; words follow in order.
class Vocab {
 public:
  explicit Vocab(const std::vector<std::string>& words);
  std::int64_t size() const { return static_cast<std::int64_t>(words_.size()); }
  const std::string& word(std::int64_t id) const;
  // Throws ValueError for a word that is not in the vocabulary.
  std::int64_t id(std::string_view word) const;
  std::vector<std::int64_t> ids(const std::vector<std::string>& words) const;
  // The words joined by spaces: "the dog sees the cats".
  std::string join(std::span<const std::int64_t> ids) const;

 private:
  std::vector<std::string> words_;
  std::unordered_map<std::string, std::int64_t> ids_;
};

struct SeqPair {
  std::vector<std::int64_t> source;
  std::vector<std::int64_t> target;
};

class SyntheticTask {
 public:
  virtual ~SyntheticTask() = default;
  virtual std::string name() const = 0;
  // One random pair.
  virtual SeqPair sample(Generator& gen) const = 0;
  // The exact answer for a source. Throws ValueError for a source the task never produces.
  virtual std::vector<std::int64_t> solve(std::span<const std::int64_t> source) const = 0;
  // Length bounds of the bare sequences (add 2 for the specials when sizing a model).
  virtual std::int64_t max_source_len() const = 0;
  virtual std::int64_t max_target_len() const = 0;

  const Vocab& vocab() const { return vocab_; }
  std::vector<SeqPair> sample(std::int64_t n, Generator& gen) const;
  // n pairs from Generator(seed): the same pairs for the same seed.
  std::vector<SeqPair> generate(std::int64_t n, std::uint64_t seed) const;

 protected:
  explicit SyntheticTask(Vocab vocab) : vocab_(std::move(vocab)) {}
  Vocab vocab_;
};

// Sequences of min_len..max_len symbols (uniform length, uniform symbols). The symbols are
// named a, b, c, ... (s0, s1, ... past 26). Subclasses say what the target is.
class SymbolTask : public SyntheticTask {
 public:
  SymbolTask(std::int64_t num_symbols, std::int64_t min_len, std::int64_t max_len);
  SeqPair sample(Generator& gen) const override;
  using SyntheticTask::sample;  // keep sample(n, gen) visible next to the override
  std::int64_t max_source_len() const override { return max_len_; }
  std::int64_t max_target_len() const override { return max_len_; }
  std::int64_t num_symbols() const { return num_symbols_; }

 protected:
  // Checks that every token is a symbol and the length is in range.
  void check_source(std::span<const std::int64_t> source) const;

 private:
  std::int64_t num_symbols_, min_len_, max_len_;
};

// target = source
class CopyTask : public SymbolTask {
 public:
  using SymbolTask::SymbolTask;
  std::string name() const override { return "copy"; }
  std::vector<std::int64_t> solve(std::span<const std::int64_t> source) const override;
};

// target = source reversed
class ReverseTask : public SymbolTask {
 public:
  using SymbolTask::SymbolTask;
  std::string name() const override { return "reverse"; }
  std::vector<std::int64_t> solve(std::span<const std::int64_t> source) const override;
};

// target = source sorted by symbol (a < b < ...), duplicates kept
class SortTask : public SymbolTask {
 public:
  using SymbolTask::SymbolTask;
  std::string name() const override { return "sort"; }
  std::vector<std::int64_t> solve(std::span<const std::int64_t> source) const override;
};

// source "a + b", target "c" with c = (a + b) mod p; each number 0..p-1 is one token (as in
// the "grokking" experiments, Power et al. 2022). a and b are uniform.
class ModularAdditionTask : public SyntheticTask {
 public:
  explicit ModularAdditionTask(std::int64_t modulus = 97);
  std::string name() const override { return "modular_addition"; }
  SeqPair sample(Generator& gen) const override;
  using SyntheticTask::sample;  // keep sample(n, gen) visible next to the override
  std::vector<std::int64_t> solve(std::span<const std::int64_t> source) const override;
  std::int64_t max_source_len() const override { return 3; }
  std::int64_t max_target_len() const override { return 1; }
  std::int64_t modulus() const { return modulus_; }
  // The token of number v (0 <= v < p).
  std::int64_t number_token(std::int64_t v) const { return kNumSpecialTokens + 1 + v; }

 private:
  std::int64_t modulus_;
};

// A toy language pair. Source (English-like, SVO, verb agrees with the subject):
//   S -> NP V NP          NP -> "the" [Adj] N         "the big dog sees the cats"
// Target (SOV, adjective after the noun, plural marker, case particles, and the verb agrees
// with the number of the OBJECT — information that comes after the verb in the source):
//   S -> NP "ga" NP "o" V  NP -> N [Adj] ["tachi"]    "inu ooki ga neko tachi o miruna"
// Lexicon (word for word): dog/dogs inu, cat/cats neko, bird/birds tori, horse/horses uma,
// frog/frogs kaeru; big ooki, small chisai, red akai, old furui, happy ureshi; verbs
// sees/see mi-, likes/like suk-, chases/chase o-, finds/find mitsuk-, follows/follow tsug-
// with target forms miru/miruna, suku/sukuna, ou/ouna, mitsuku/mitsukuna, tsugu/tsuguna
// (-na: plural object). Each noun phrase is plural with probability 1/2 and has an adjective
// with probability 1/2.
class TranslationTask : public SyntheticTask {
 public:
  TranslationTask();
  std::string name() const override { return "translation"; }
  SeqPair sample(Generator& gen) const override;
  using SyntheticTask::sample;  // keep sample(n, gen) visible next to the override
  // Parses the source (ValueError naming the position if it is not a sentence) and
  // translates it.
  std::vector<std::int64_t> solve(std::span<const std::int64_t> source) const override;
  std::int64_t max_source_len() const override { return 7; }
  std::int64_t max_target_len() const override { return 9; }
  // A random source sentence as text, with a final " ." (for grammar_text).
  std::string sample_sentence(Generator& gen) const;
};

// Sentences of the translation task's source language, one per line ("the dogs like the red
// cat ."), from Generator(seed), until at least num_bytes bytes: the fallback text corpus.
std::string grammar_text(std::int64_t num_bytes, std::uint64_t seed);

// Encoder-decoder batch, every tensor int64; S, T are the longest lengths in the batch + 1.
struct Seq2SeqBatch {
  Tensor src;           // (B, S): source, EOS, then PAD
  Tensor src_pad_mask;  // (B, S): 1 where src is PAD (nonzero = pad), else 0
  Tensor tgt_in;        // (B, T): BOS, target, then PAD — the decoder's input
  Tensor tgt_out;       // (B, T): target, EOS, then kIgnoreIndex — what it must predict
  Tensor tgt_pad_mask;  // (B, T): 1 where tgt_in is PAD
};
Seq2SeqBatch collate_seq2seq(std::span<const SeqPair> pairs);

// Decoder-only batch. Each row is the sequence BOS source SEP target EOS cut into
// inputs = seq[:-1] and targets = seq[1:], right-padded to the longest row:
struct LMBatch {
  Tensor inputs;    // (B, T): PAD after the row's end
  Tensor targets;   // (B, T): the answer tokens and EOS; kIgnoreIndex on the prompt and padding
  Tensor pad_mask;  // (B, T): 1 where inputs is PAD
};
LMBatch collate_lm(std::span<const SeqPair> pairs);

}  // namespace tapegrad::data
