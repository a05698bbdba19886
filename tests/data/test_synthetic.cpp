// test_synthetic.cpp — the synthetic tasks have the exact answers they claim, follow their
// grammar, are reproducible from a seed, and batch into the documented tensors.
#include <cmath>
#include <set>
#include <sstream>

#include "data_helpers.hpp"

using namespace tapegrad;
using namespace tapegrad::data;

namespace {

void check_tokens(const SyntheticTask& task, const std::vector<std::int64_t>& seq, std::int64_t max_len) {
  CHECK(!seq.empty());
  CHECK(static_cast<std::int64_t>(seq.size()) <= max_len);
  for (std::int64_t t : seq) CHECK((t >= kNumSpecialTokens && t < task.vocab().size()));
}

std::vector<std::string> words(const Vocab& vocab, const std::vector<std::int64_t>& ids) {
  std::vector<std::string> out;
  for (std::int64_t id : ids) out.push_back(vocab.word(id));
  return out;
}

std::vector<std::string> split(const std::string& s) {
  std::istringstream in(s);
  std::vector<std::string> out;
  for (std::string w; in >> w;) out.push_back(w);
  return out;
}

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

}  // namespace

TEST_CASE("Vocab: specials first, lookups, errors", "[data][synthetic]") {
  const Vocab v({"x", "y"});
  CHECK(v.size() == 6);
  CHECK(v.word(kPad) == "<pad>");
  CHECK(v.word(kBos) == "<bos>");
  CHECK(v.word(kEos) == "<eos>");
  CHECK(v.word(kSep) == "<sep>");
  CHECK(v.id("y") == 5);
  const std::vector<std::int64_t> ids = {4, 5, 4};
  CHECK(v.join(ids) == "x y x");
  REQUIRE_THROWS_WITH(v.id("z"), Catch::Contains("'z' is not in the vocabulary"));
  REQUIRE_THROWS_WITH(v.word(6), Catch::Contains("id 6 is outside [0, 6)"));
  REQUIRE_THROWS_WITH(Vocab({"x", "x"}), Catch::Contains("'x' appears twice"));
  REQUIRE_THROWS_WITH(Vocab({"<eos>"}), Catch::Contains("appears twice"));
}

TEST_CASE("Copy, reverse and sort give the exact answer", "[data][synthetic]") {
  const CopyTask copy(5, 2, 6);
  const ReverseTask reverse(5, 2, 6);
  const SortTask sort(30, 1, 9);
  CHECK(sort.vocab().word(kNumSpecialTokens) == "s0");
  CHECK(copy.vocab().word(kNumSpecialTokens + 4) == "e");
  CHECK(copy.vocab().size() == kNumSpecialTokens + 5);
  std::set<std::size_t> lengths;
  for (const SeqPair& p : copy.generate(200, 1)) {
    check_tokens(copy, p.source, 6);
    CHECK(p.target == p.source);
    lengths.insert(p.source.size());
  }
  CHECK(lengths == std::set<std::size_t>{2, 3, 4, 5, 6});  // every length occurs
  for (const SeqPair& p : reverse.generate(200, 2)) {
    check_tokens(reverse, p.source, 6);
    REQUIRE(p.target.size() == p.source.size());
    for (std::size_t i = 0; i < p.source.size(); ++i) CHECK(p.target[i] == p.source[p.source.size() - 1 - i]);
  }
  for (const SeqPair& p : sort.generate(200, 3)) {
    check_tokens(sort, p.source, 9);
    CHECK(std::is_sorted(p.target.begin(), p.target.end()));
    CHECK(std::is_permutation(p.target.begin(), p.target.end(), p.source.begin(), p.source.end()));
  }
  const std::vector<std::int64_t> src = {6, 4, 6, 5};
  CHECK(sort.solve(src) == std::vector<std::int64_t>{4, 5, 6, 6});
  CHECK(reverse.solve(std::vector<std::int64_t>{4, 5, 6}) == std::vector<std::int64_t>{6, 5, 4});
  REQUIRE_THROWS_WITH(reverse.solve(std::vector<std::int64_t>{4}), Catch::Contains("source length 1 is outside [2, 6]"));
  REQUIRE_THROWS_WITH(reverse.solve(std::vector<std::int64_t>{4, 2}), Catch::Contains("token 2 at position 1 is not a symbol"));
  REQUIRE_THROWS_WITH(CopyTask(0, 1, 2), Catch::Contains("num_symbols >= 1"));
  REQUIRE_THROWS_AS(CopyTask(3, 4, 2), ValueError);
}

TEST_CASE("Modular addition is right", "[data][synthetic]") {
  const ModularAdditionTask task(13);
  CHECK(task.vocab().size() == kNumSpecialTokens + 1 + 13);
  std::set<std::int64_t> answers;
  for (const SeqPair& p : task.generate(500, 4)) {
    REQUIRE(p.source.size() == 3);
    REQUIRE(p.target.size() == 1);
    CHECK(task.vocab().word(p.source[1]) == "+");
    const int a = std::stoi(task.vocab().word(p.source[0])), b = std::stoi(task.vocab().word(p.source[2]));
    const int c = std::stoi(task.vocab().word(p.target[0]));
    CHECK(c == (a + b) % 13);
    answers.insert(c);
  }
  CHECK(answers.size() == 13);
  const std::vector<std::int64_t> src = {task.number_token(12), kNumSpecialTokens, task.number_token(5)};
  CHECK(task.solve(src) == std::vector<std::int64_t>{task.number_token(4)});
  REQUIRE_THROWS_WITH(task.solve(std::vector<std::int64_t>{task.number_token(1), task.number_token(2)}),
                      Catch::Contains("must be '<number> + <number>'"));
  REQUIRE_THROWS_WITH(ModularAdditionTask(1), Catch::Contains("modulus must be >= 2"));
}

TEST_CASE("Translation: hand-checked sentences", "[data][synthetic][translation]") {
  const TranslationTask task;
  const Vocab& v = task.vocab();
  auto translate = [&](const std::string& source) { return v.join(task.solve(v.ids(split(source)))); };
  CHECK(translate("the big dog sees the cats") == "inu ooki ga neko tachi o miruna");
  CHECK(translate("the dogs see the small cat") == "inu tachi ga neko chisai o miru");
  CHECK(translate("the old horses chase the red frogs") == "uma furui tachi ga kaeru akai tachi o ouna");
  CHECK(translate("the bird follows the bird") == "tori ga tori o tsugu");

  REQUIRE_THROWS_WITH(translate("the dog see the cat"), Catch::Contains("does not agree with the singular subject"));
  REQUIRE_THROWS_WITH(translate("dog sees the cat"), Catch::Contains("position 0: expected 'the', got 'dog'"));
  REQUIRE_THROWS_WITH(translate("the big big dog sees the cat"), Catch::Contains("expected a noun, got 'big'"));
  REQUIRE_THROWS_WITH(translate("the dog sees the cat the"), Catch::Contains("expected the end of the sentence"));
  REQUIRE_THROWS_WITH(translate("the dog sees the"), Catch::Contains("the sentence ends where"));
  REQUIRE_THROWS_WITH(translate("the dog inu the cat"), Catch::Contains("expected a verb, got 'inu'"));
}

TEST_CASE("Translation: sampled pairs follow both grammars", "[data][synthetic][translation]") {
  const TranslationTask task;
  const Vocab& v = task.vocab();
  int plural_objects = 0, adjectives = 0;
  const auto pairs = task.generate(300, 5);
  for (const SeqPair& p : pairs) {
    check_tokens(task, p.source, task.max_source_len());
    check_tokens(task, p.target, task.max_target_len());
    CHECK(task.solve(p.source) == p.target);
    const auto src = words(v, p.source), tgt = words(v, p.target);
    // Source: the [adj] N V the [adj] N — the verb is the word before the second "the".
    REQUIRE(src[0] == "the");
    const auto second_the = std::find(src.begin() + 1, src.end(), "the");
    REQUIRE(second_the != src.end());
    const std::string subject = *(second_the - 2), verb = *(second_the - 1), object = src.back();
    const bool subject_plural = ends_with(subject, "s"), object_plural = ends_with(object, "s");
    CHECK(ends_with(verb, "s") == !subject_plural);  // English agreement
    // Target: N [adj] [tachi] ga N [adj] [tachi] o V — verb last, agreeing with the object.
    REQUIRE(std::count(tgt.begin(), tgt.end(), "ga") == 1);
    REQUIRE(std::count(tgt.begin(), tgt.end(), "o") == 1);
    const auto ga = std::find(tgt.begin(), tgt.end(), "ga"), o = std::find(tgt.begin(), tgt.end(), "o");
    CHECK(ga < o);
    CHECK(o + 2 == tgt.end());
    CHECK((*(ga - 1) == "tachi") == subject_plural);
    CHECK((*(o - 1) == "tachi") == object_plural);
    CHECK(ends_with(tgt.back(), "na") == object_plural);
    // "the" twice out, "ga" and "o" in, one "tachi" per plural phrase.
    CHECK(p.target.size() == p.source.size() + (subject_plural ? 1 : 0) + (object_plural ? 1 : 0));
    plural_objects += object_plural;
    adjectives += static_cast<int>(p.source.size()) - 5;
  }
  // Both numbers and both phrase shapes occur (each with probability 1/2).
  CHECK(plural_objects > 100);
  CHECK(plural_objects < 200);
  CHECK(adjectives > 200);
  CHECK(adjectives < 400);
}

TEST_CASE("Tasks are reproducible from the seed", "[data][synthetic]") {
  const TranslationTask translation;
  const ReverseTask reverse(8, 1, 8);
  const ModularAdditionTask add(11);
  for (const SyntheticTask* task : std::vector<const SyntheticTask*>{&translation, &reverse, &add}) {
    CAPTURE(task->name());
    const auto a = task->generate(50, 9), b = task->generate(50, 9), c = task->generate(50, 10);
    auto sources = [](const std::vector<SeqPair>& pairs) {
      std::vector<std::vector<std::int64_t>> out;
      for (const SeqPair& p : pairs) out.push_back(p.source);
      return out;
    };
    CHECK(sources(a) == sources(b));
    CHECK(sources(a) != sources(c));
    Generator gen(9);
    CHECK(sources(task->sample(50, gen)) == sources(a));
  }
}

TEST_CASE("grammar_text: whole sentences of the source grammar, reproducible", "[data][synthetic]") {
  const std::string text = grammar_text(2000, 3);
  CHECK(text.size() >= 2000);
  CHECK(text.size() < 2100);
  CHECK(text.back() == '\n');
  CHECK(text == grammar_text(2000, 3));
  CHECK(text != grammar_text(2000, 4));
  const TranslationTask task;
  std::istringstream lines(text);
  int n = 0;
  for (std::string line; std::getline(lines, line); ++n) {
    auto w = split(line);
    REQUIRE(w.back() == ".");
    w.pop_back();
    CHECK_NOTHROW(task.solve(task.vocab().ids(w)));
  }
  CHECK(n > 50);
  CHECK(grammar_text(0, 1).empty());
}

TEST_CASE("collate_seq2seq: specials, padding and masks", "[data][synthetic][collate]") {
  const std::vector<SeqPair> pairs = {{{4, 5, 6}, {7}}, {{8}, {9, 10, 11}}};
  const Seq2SeqBatch b = collate_seq2seq(pairs);
  using V = std::vector<std::int64_t>;
  CHECK(b.src.shape() == Shape{2, 4});
  CHECK(b.src.dtype() == DType::int64);
  CHECK(b.src.to_vector<std::int64_t>() == V{4, 5, 6, kEos, 8, kEos, kPad, kPad});
  CHECK(b.src_pad_mask.to_vector<std::int64_t>() == V{0, 0, 0, 0, 0, 0, 1, 1});
  CHECK(b.tgt_in.shape() == Shape{2, 4});
  CHECK(b.tgt_in.to_vector<std::int64_t>() == V{kBos, 7, kPad, kPad, kBos, 9, 10, 11});
  CHECK(b.tgt_out.to_vector<std::int64_t>() == V{7, kEos, kIgnoreIndex, kIgnoreIndex, 9, 10, 11, kEos});
  CHECK(b.tgt_pad_mask.to_vector<std::int64_t>() == V{0, 0, 1, 1, 0, 0, 0, 0});

  // The loss skips the padding: cross_entropy over tgt_out counts 2 + 4 targets.
  const Tensor logits = zeros({2, 4, 12});
  const Tensor loss = cross_entropy(logits.reshape({8, 12}), b.tgt_out.reshape({8}), Reduction::sum);
  CHECK(loss.item() == Approx(6 * std::log(12.0)));

  REQUIRE_THROWS_WITH(collate_seq2seq(std::vector<SeqPair>{}), Catch::Contains("no pairs"));
  REQUIRE_THROWS_WITH(collate_seq2seq(std::vector<SeqPair>{{{4, kEos}, {5}}}),
                      Catch::Contains("pair 0 holds the special token 2"));
}

TEST_CASE("collate_lm: prompt SEP answer, loss on the answer only", "[data][synthetic][collate]") {
  const std::vector<SeqPair> pairs = {{{4, 5}, {6}}, {{7}, {8, 9}}};
  const LMBatch b = collate_lm(pairs);
  using V = std::vector<std::int64_t>;
  // Row 0: BOS 4 5 SEP 6 EOS; row 1: BOS 7 SEP 8 9 EOS.
  const std::int64_t I = kIgnoreIndex;
  CHECK(b.inputs.shape() == Shape{2, 5});
  CHECK(b.inputs.to_vector<std::int64_t>() == V{kBos, 4, 5, kSep, 6, kBos, 7, kSep, 8, 9});
  CHECK(b.targets.to_vector<std::int64_t>() == V{I, I, I, 6, kEos, I, I, 8, 9, kEos});
  CHECK(b.pad_mask.to_vector<std::int64_t>() == V{0, 0, 0, 0, 0, 0, 0, 0, 0, 0});

  const LMBatch padded = collate_lm(std::vector<SeqPair>{{{4}, {5}}, {{4, 4, 4}, {5, 5}}});
  CHECK(padded.inputs.shape() == Shape{2, 7});
  CHECK(padded.inputs.to_vector<std::int64_t>() ==
        V{kBos, 4, kSep, 5, kPad, kPad, kPad, kBos, 4, 4, 4, kSep, 5, 5});
  CHECK(padded.targets.to_vector<std::int64_t>() == V{I, I, 5, kEos, I, I, I, I, I, I, I, 5, 5, kEos});
  CHECK(padded.pad_mask.to_vector<std::int64_t>() == V{0, 0, 0, 0, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0});
  REQUIRE_THROWS_WITH(collate_lm(std::vector<SeqPair>{{{kSep}, {5}}}), Catch::Contains("special token 3"));
}
