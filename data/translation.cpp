// translation.cpp — the toy language pair of TranslationTask (SVO -> SOV with postnominal
// adjectives, a plural marker, case particles and object agreement) and grammar_text.
#include <array>

#include "synthetic.hpp"

namespace tapegrad::data {

namespace {

struct Noun {
  const char *singular, *plural, *target;
};
struct Adjective {
  const char *source, *target;
};
struct Verb {
  const char *singular_subject, *plural_subject;  // source: agrees with the subject
  const char *singular_object, *plural_object;    // target: agrees with the object
};

constexpr std::array<Noun, 5> kNouns = {{{"dog", "dogs", "inu"},
                                         {"cat", "cats", "neko"},
                                         {"bird", "birds", "tori"},
                                         {"horse", "horses", "uma"},
                                         {"frog", "frogs", "kaeru"}}};
constexpr std::array<Adjective, 5> kAdjectives = {
    {{"big", "ooki"}, {"small", "chisai"}, {"red", "akai"}, {"old", "furui"}, {"happy", "ureshi"}}};
constexpr std::array<Verb, 5> kVerbs = {{{"sees", "see", "miru", "miruna"},
                                         {"likes", "like", "suku", "sukuna"},
                                         {"chases", "chase", "ou", "ouna"},
                                         {"finds", "find", "mitsuku", "mitsukuna"},
                                         {"follows", "follow", "tsugu", "tsuguna"}}};

std::vector<std::string> translation_words() {
  std::vector<std::string> words = {"the"};
  for (const Noun& n : kNouns) words.insert(words.end(), {n.singular, n.plural});
  for (const Adjective& a : kAdjectives) words.emplace_back(a.source);
  for (const Verb& v : kVerbs) words.insert(words.end(), {v.singular_subject, v.plural_subject});
  for (const Noun& n : kNouns) words.emplace_back(n.target);
  for (const Adjective& a : kAdjectives) words.emplace_back(a.target);
  for (const Verb& v : kVerbs) words.insert(words.end(), {v.singular_object, v.plural_object});
  words.insert(words.end(), {"ga", "o", "tachi"});
  return words;
}

// A noun phrase: which noun, singular or plural, which adjective (-1: none).
struct Phrase {
  int noun = 0;
  bool plural = false;
  int adjective = -1;
};

Phrase sample_phrase(Generator& gen) {
  Phrase p;
  p.noun = static_cast<int>(gen.next_below(kNouns.size()));
  p.plural = gen.next_below(2) == 1;
  p.adjective = gen.next_below(2) == 1 ? static_cast<int>(gen.next_below(kAdjectives.size())) : -1;
  return p;
}

// Reads the source words of a sentence one at a time; every mismatch is a ValueError.
class SourceParser {
 public:
  SourceParser(const Vocab& vocab, std::span<const std::int64_t> source) : vocab_(vocab), source_(source) {}

  Phrase phrase() {
    Phrase p;
    expect_word("the");
    std::string w = next_word("an adjective or a noun");
    for (std::size_t a = 0; a < kAdjectives.size(); ++a)
      if (w == kAdjectives[a].source) {
        p.adjective = static_cast<int>(a);
        w = next_word("a noun");
      }
    for (std::size_t n = 0; n < kNouns.size(); ++n)
      if (w == kNouns[n].singular || w == kNouns[n].plural) {
        p.noun = static_cast<int>(n);
        p.plural = w == kNouns[n].plural;
        return p;
      }
    fail("expected a noun, got '" + w + "'");
  }

  int verb(bool plural_subject) {
    const std::string w = next_word("a verb");
    for (std::size_t v = 0; v < kVerbs.size(); ++v) {
      if (w == kVerbs[v].singular_subject || w == kVerbs[v].plural_subject) {
        if ((w == kVerbs[v].plural_subject) != plural_subject)
          fail("the verb '" + w + "' does not agree with the " +
               (plural_subject ? "plural" : "singular") + " subject");
        return static_cast<int>(v);
      }
    }
    fail("expected a verb, got '" + w + "'");
  }

  void expect_end() {
    if (pos_ != source_.size()) fail("expected the end of the sentence");
  }

 private:
  std::string next_word(const char* what) {
    if (pos_ >= source_.size()) fail(std::string("the sentence ends where ") + what + " should be");
    const std::int64_t id = source_[pos_++];
    if (id < kNumSpecialTokens || id >= vocab_.size()) fail("token " + std::to_string(id) + " is not a word");
    return vocab_.word(id);
  }
  void expect_word(const char* word) {
    const std::string w = next_word(word);
    if (w != word) fail("expected '" + std::string(word) + "', got '" + w + "'");
  }
  [[noreturn]] void fail(const std::string& what) const {
    throw ValueError("translation task: source position " + std::to_string(pos_ == 0 ? 0 : pos_ - 1) + ": " +
                     what + " (grammar: the [adjective] noun verb the [adjective] noun)");
  }

  const Vocab& vocab_;
  std::span<const std::int64_t> source_;
  std::size_t pos_ = 0;
};

}  // namespace

TranslationTask::TranslationTask() : SyntheticTask(Vocab(translation_words())) {}

SeqPair TranslationTask::sample(Generator& gen) const {
  const Phrase subject = sample_phrase(gen);
  const auto verb = gen.next_below(kVerbs.size());
  const Phrase object = sample_phrase(gen);
  auto source_phrase = [&](const Phrase& p, std::vector<std::int64_t>& out) {
    out.push_back(vocab_.id("the"));
    if (p.adjective >= 0) out.push_back(vocab_.id(kAdjectives[static_cast<std::size_t>(p.adjective)].source));
    const Noun& n = kNouns[static_cast<std::size_t>(p.noun)];
    out.push_back(vocab_.id(p.plural ? n.plural : n.singular));
  };
  SeqPair pair;
  source_phrase(subject, pair.source);
  const Verb& v = kVerbs[verb];
  pair.source.push_back(vocab_.id(subject.plural ? v.plural_subject : v.singular_subject));
  source_phrase(object, pair.source);
  pair.target = solve(pair.source);
  return pair;
}

std::vector<std::int64_t> TranslationTask::solve(std::span<const std::int64_t> source) const {
  SourceParser parser(vocab_, source);
  const Phrase subject = parser.phrase();
  const int verb = parser.verb(subject.plural);
  const Phrase object = parser.phrase();
  parser.expect_end();

  std::vector<std::int64_t> target;
  auto target_phrase = [&](const Phrase& p) {
    target.push_back(vocab_.id(kNouns[static_cast<std::size_t>(p.noun)].target));
    if (p.adjective >= 0) target.push_back(vocab_.id(kAdjectives[static_cast<std::size_t>(p.adjective)].target));
    if (p.plural) target.push_back(vocab_.id("tachi"));
  };
  target_phrase(subject);
  target.push_back(vocab_.id("ga"));
  target_phrase(object);
  target.push_back(vocab_.id("o"));
  const Verb& v = kVerbs[static_cast<std::size_t>(verb)];
  target.push_back(vocab_.id(object.plural ? v.plural_object : v.singular_object));
  return target;
}

std::string TranslationTask::sample_sentence(Generator& gen) const { return vocab_.join(sample(gen).source) + " ."; }

std::string grammar_text(std::int64_t num_bytes, std::uint64_t seed) {
  if (num_bytes < 0) throw ValueError("grammar_text: num_bytes must be >= 0, got " + std::to_string(num_bytes));
  const TranslationTask task;
  Generator gen(seed);
  std::string text;
  while (static_cast<std::int64_t>(text.size()) < num_bytes) text += task.sample_sentence(gen) + "\n";
  return text;
}

}  // namespace tapegrad::data
