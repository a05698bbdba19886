// test_tokenizer.cpp — CharTokenizer and BpeTokenizer: round trips on any bytes (invalid UTF-8,
// empty), compression, training against a naive reference, save/load, damaged files.
#include <map>

#include "data_helpers.hpp"

using namespace tapegrad;
using namespace tapegrad::data;
using tapegrad::testing::DataScratchDir;
using tapegrad::testing::random_bytes;
using tapegrad::testing::read_all;
using tapegrad::testing::write_all;

namespace {

const std::string kSample =
    "The licensee may copy and distribute the Program. The licensee may modify the Program, "
    "and the licensor grants the licensee a license to distribute modified copies of the Program.\n"
    "  Section 2.  Basic Permissions: 123 + 456 = 579!!\n\n";

// The text the BPE tests train on: the default corpus (licence texts on Debian).
const std::string& corpus_text() {
  static const std::string text = [] {
    std::string all;
    const Corpus corpus = Corpus::default_corpus();
    for (std::string_view t : corpus.texts()) all += t;
    return all;
  }();
  return text;
}

// The straightforward BPE trainer: recount every pair of every word before each merge.
// Same words, same tie rule (largest count, then smallest (left, right)).
std::vector<BpeTokenizer::Merge> naive_bpe(std::string_view text, std::int64_t vocab_size) {
  std::map<std::string_view, std::int64_t> counts;
  for (std::string_view w : BpeTokenizer::split_words(text)) ++counts[w];
  std::vector<std::pair<std::vector<TokenId>, std::int64_t>> words;
  for (const auto& [w, c] : counts) words.push_back({std::vector<TokenId>(w.begin(), w.end()), c});
  for (auto& [w, c] : words)
    for (TokenId& t : w) t = static_cast<unsigned char>(t);
  std::vector<BpeTokenizer::Merge> merges;
  while (256 + static_cast<std::int64_t>(merges.size()) < vocab_size) {
    std::map<BpeTokenizer::Merge, std::int64_t> pairs;
    for (const auto& [w, c] : words)
      for (std::size_t i = 0; i + 1 < w.size(); ++i) pairs[{w[i], w[i + 1]}] += c;
    BpeTokenizer::Merge best{};
    std::int64_t best_count = 0;
    for (const auto& [p, c] : pairs)
      if (c > best_count) best = p, best_count = c;  // map order: the smallest pair wins ties
    if (best_count < 2) break;
    const auto id = static_cast<TokenId>(256 + merges.size());
    merges.push_back(best);
    for (auto& [w, c] : words) {
      std::vector<TokenId> out;
      for (std::size_t i = 0; i < w.size(); ++i) {
        if (i + 1 < w.size() && w[i] == best.first && w[i + 1] == best.second) {
          out.push_back(id);
          ++i;
        } else {
          out.push_back(w[i]);
        }
      }
      w = out;
    }
  }
  return merges;
}

}  // namespace

// ---------------------------------------------------------------- CharTokenizer

TEST_CASE("CharTokenizer: sorted unique bytes, round trip, errors", "[data][tokenizer]") {
  const auto tok = CharTokenizer::from_text("hello world");
  CHECK(tok.vocab_size() == 8);
  CHECK(std::string(tok.bytes().begin(), tok.bytes().end()) == " dehlorw");
  CHECK(tok.encode("hello") == std::vector<TokenId>{3, 2, 4, 4, 5});
  CHECK(tok.decode(tok.encode("hello world")) == "hello world");
  CHECK(tok.encode("").empty());
  CHECK(tok.decode(std::vector<TokenId>{}).empty());
  CHECK(tok.name() == "char");
  CHECK(tok.id_of('z') == -1);

  REQUIRE_THROWS_AS(tok.encode("hex"), ValueError);
  REQUIRE_THROWS_WITH(tok.encode("hex"), Catch::Contains("byte 120 at offset 2 is not in the vocabulary"));
  REQUIRE_THROWS_WITH(tok.decode(std::vector<TokenId>{0, 8}),
                      Catch::Contains("id 8 at position 1 is outside the vocabulary [0, 8)"));
  REQUIRE_THROWS_WITH(CharTokenizer::from_text(""), Catch::Contains("the text is empty"));
  REQUIRE_THROWS_WITH(CharTokenizer(std::vector<unsigned char>{5, 3}), Catch::Contains("strictly increasing"));
}

TEST_CASE("CharTokenizer: any bytes round-trip, including invalid UTF-8 and NUL", "[data][tokenizer]") {
  Generator gen(1);
  const auto tok = CharTokenizer::all_bytes();
  CHECK(tok.vocab_size() == 256);
  for (std::size_t n : {0, 1, 2, 7, 100, 1000}) {
    const std::string s = random_bytes(n, gen);
    const auto ids = tok.encode(s);
    CHECK(ids.size() == n);
    CHECK(tok.decode(ids) == s);
  }
  const std::string invalid = std::string("\xff\xfe\xc3 \xe2\x82", 6) + std::string(1, '\0') + "\x80";
  CHECK(tok.decode(tok.encode(invalid)) == invalid);
  // A vocabulary built from such text works too.
  const auto own = CharTokenizer::from_text(invalid);
  CHECK(own.vocab_size() == 8);
  CHECK(own.decode(own.encode(invalid)) == invalid);
}

TEST_CASE("CharTokenizer and Tokenizer: tensor helpers", "[data][tokenizer]") {
  const auto tok = CharTokenizer::from_text("abc");
  const Tensor t = tok.encode_tensor("cab");
  CHECK(t.shape() == Shape{1, 3});
  CHECK(t.dtype() == DType::int64);
  CHECK(t.to_vector<std::int64_t>() == std::vector<std::int64_t>{2, 0, 1});
  CHECK(tok.decode_tensor(t) == "cab");
  REQUIRE_THROWS_AS(tok.decode_tensor(tensor({0, 1}, {2})), DTypeError);
  REQUIRE_THROWS_WITH(tok.decode_tensor(tensor({0, 3}, {2}, DType::int64)), Catch::Contains("id 3 is outside"));
}

// ---------------------------------------------------------------- BPE

TEST_CASE("BpeTokenizer: split_words follows the byte-class rule", "[data][tokenizer][bpe]") {
  using V = std::vector<std::string_view>;
  CHECK(BpeTokenizer::split_words("Hello world  foo\n\nbar123!! é") ==
        V{"Hello", " world", " ", " foo", "\n\n", "bar", "123", "!!", " é"});
  CHECK(BpeTokenizer::split_words("").empty());
  CHECK(BpeTokenizer::split_words("  ") == V{"  "});
  CHECK(BpeTokenizer::split_words("a \n b") == V{"a", " \n", " b"});
  // Long runs are cut at kMaxWordBytes.
  const std::string run(150, 'a');
  const auto words = BpeTokenizer::split_words(run);
  CHECK(words.size() == 3);
  CHECK(words[0].size() == BpeTokenizer::kMaxWordBytes);
  // The words always concatenate back to the text.
  Generator gen(3);
  for (int i = 0; i < 20; ++i) {
    const std::string s = random_bytes(gen.next_below(300), gen);
    std::string joined;
    for (std::string_view w : BpeTokenizer::split_words(s)) {
      CHECK(!w.empty());
      joined += w;
    }
    CHECK(joined == s);
  }
}

TEST_CASE("BpeTokenizer: incremental training equals recounting every merge", "[data][tokenizer][bpe]") {
  const std::string text = corpus_text().substr(0, 20000);
  const auto bpe = BpeTokenizer::train(text, 400);
  CHECK(bpe.vocab_size() == 400);
  CHECK(bpe.merges() == naive_bpe(text, 400));
  // Deterministic.
  CHECK(BpeTokenizer::train(text, 400).merges() == bpe.merges());
  // The first merges of English text are frequent pairs such as "e " or " t".
  CHECK(bpe.token_bytes(256).size() == 2);
  CHECK(bpe.token_bytes(399).size() >= 2);
}

TEST_CASE("BpeTokenizer: stops when no pair occurs twice, and needs vocab_size >= 256", "[data][tokenizer][bpe]") {
  CHECK(BpeTokenizer::train("abc", 1000).vocab_size() == 256);
  const auto bpe = BpeTokenizer::train("abab abab", 1000);
  // "ab" (4 times), then "abab" (twice); " abab" occurs once, so it stays " " + "abab".
  CHECK(bpe.merges() == std::vector<BpeTokenizer::Merge>{{'a', 'b'}, {256, 256}});
  CHECK(bpe.encode("abab abab") == std::vector<TokenId>{257, ' ', 257});
  CHECK(BpeTokenizer::train("", 300).vocab_size() == 256);
  REQUIRE_THROWS_WITH(BpeTokenizer::train("abc", 255), Catch::Contains("vocab_size must be in [256"));
}

TEST_CASE("BpeTokenizer: decode(encode(s)) == s for any bytes", "[data][tokenizer][bpe]") {
  const auto bpe = BpeTokenizer::train(corpus_text(), 1024);
  REQUIRE(bpe.vocab_size() == 1024);
  Generator gen(7);
  for (int i = 0; i < 200; ++i) {
    const std::string s = random_bytes(gen.next_below(200), gen);
    CHECK(bpe.decode(bpe.encode(s)) == s);
  }
  // Random picks from a small alphabet make long runs, repeats and mixed classes.
  for (int i = 0; i < 100; ++i) {
    std::string s;
    const std::string alphabet = std::string("ae tn\n\xc3\xa9\xff", 9) + std::string(1, '\0') + "1.";
    for (std::uint64_t n = gen.next_below(300); n > 0; --n) s += alphabet[gen.next_below(alphabet.size())];
    CHECK(bpe.decode(bpe.encode(s)) == s);
  }
  for (const std::string& s : {std::string(), std::string("\xff\xfe\xfd", 3), std::string("caf\xc3", 4),
                              std::string(1000, ' '), std::string(1000, 'x'), kSample, corpus_text()})
    CHECK(bpe.decode(bpe.encode(s)) == s);
  CHECK(bpe.encode("").empty());
}

TEST_CASE("BpeTokenizer: merges compress typical text", "[data][tokenizer][bpe]") {
  const auto bpe = BpeTokenizer::train(corpus_text(), 512);
  const auto ids = bpe.encode(kSample);
  CHECK(ids.size() < kSample.size() * 2 / 3);
  const auto all = bpe.encode(corpus_text());
  CHECK(static_cast<double>(corpus_text().size()) / static_cast<double>(all.size()) > 1.8);
  // A larger vocabulary compresses more.
  const auto bigger = BpeTokenizer::train(corpus_text(), 2048);
  CHECK(bigger.encode(corpus_text()).size() < all.size());
  for (TokenId id : ids) CHECK((id >= 0 && id < 512));
}

TEST_CASE("BpeTokenizer: the constructor checks merges", "[data][tokenizer][bpe]") {
  const BpeTokenizer ok({{'a', 'b'}, {256, 'c'}});
  CHECK(ok.token_bytes(257) == "abc");
  CHECK(ok.encode("abc") == std::vector<TokenId>{257});
  CHECK(ok.decode(std::vector<TokenId>{257, 'a'}) == "abca");
  REQUIRE_THROWS_WITH(BpeTokenizer({{'a', 256}}), Catch::Contains("merge 0 (97, 256) uses an id not created before it"));
  REQUIRE_THROWS_WITH(BpeTokenizer({{'a', 'b'}, {'a', 'b'}}), Catch::Contains("repeats an earlier merge"));
  REQUIRE_THROWS_WITH(ok.decode(std::vector<TokenId>{258}), Catch::Contains("id 258 at position 0 is outside"));
  REQUIRE_THROWS_AS(ok.token_bytes(-1), ValueError);
}

// ---------------------------------------------------------------- files

TEST_CASE("Tokenizers: save and load round trip", "[data][tokenizer][file]") {
  DataScratchDir dir;
  const auto bpe = BpeTokenizer::train(corpus_text(), 600);
  bpe.save(dir.file("bpe.tok"));
  const std::string file = read_all(dir.file("bpe.tok"));
  CHECK(file.rfind("tapegrad-tokenizer 1\ntype bpe\npretokenizer 1\nmerges 344\n", 0) == 0);
  const auto loaded = BpeTokenizer::load(dir.file("bpe.tok"));
  CHECK(loaded.merges() == bpe.merges());
  CHECK(loaded.encode(kSample) == bpe.encode(kSample));
  const auto any = load_tokenizer(dir.file("bpe.tok"));
  CHECK(any->name() == "bpe");
  CHECK(any->vocab_size() == 600);
  CHECK(any->encode(kSample) == bpe.encode(kSample));

  const auto chars = CharTokenizer::from_text(kSample);
  chars.save(dir.file("char.tok"));
  CHECK(CharTokenizer::load(dir.file("char.tok")).bytes() == chars.bytes());
  const auto any_char = load_tokenizer(dir.file("char.tok"));
  CHECK(any_char->name() == "char");
  CHECK(any_char->encode(kSample) == chars.encode(kSample));

  REQUIRE_THROWS_WITH(CharTokenizer::load(dir.file("bpe.tok")), Catch::Contains("not a char tokenizer"));
  REQUIRE_THROWS_WITH(BpeTokenizer::load(dir.file("char.tok")), Catch::Contains("not a bpe tokenizer"));
  REQUIRE_THROWS_AS(load_tokenizer(dir.file("missing.tok")), io::IoError);
}

TEST_CASE("Tokenizers: a damaged file throws FormatError naming the file and line", "[data][tokenizer][file]") {
  DataScratchDir dir;
  const std::string path = dir.file("t.tok");
  const std::string good = "tapegrad-tokenizer 1\ntype bpe\npretokenizer 1\nmerges 2\n97 98\n256 99\nend\n";
  write_all(path, good);
  CHECK(load_tokenizer(path)->vocab_size() == 258);

  const std::vector<std::pair<std::string, std::string>> cases = {
      {"", "line 1: unexpected end of file"},
      {"GIF89a\x01\x02\n", "not a tapegrad tokenizer file"},
      {"tapegrad-tokenizer 2\ntype bpe\n", "format version 2 is not supported"},
      {"tapegrad-tokenizer x\n", "'x' is not an integer"},
      {"tapegrad-tokenizer 1\ntype wordpiece\nend\n", "unknown tokenizer type 'wordpiece'"},
      {"tapegrad-tokenizer 1\ntype bpe\npretokenizer 2\n", "line 3: value 2 is outside [1, 1]"},
      {"tapegrad-tokenizer 1\ntype bpe\npretokenizer 1\nmerges 3\n97 98\n256 99\nend\n", "line 7: expected 2 field(s)"},
      {"tapegrad-tokenizer 1\ntype bpe\npretokenizer 1\nmerges 2\n97 98\n", "line 6: unexpected end of file"},
      {"tapegrad-tokenizer 1\ntype bpe\npretokenizer 1\nmerges 2\n97 98\n257 99\nend\n", "line 6: value 257 is outside [0, 256]"},
      {"tapegrad-tokenizer 1\ntype bpe\npretokenizer 1\nmerges 2\n97 98\n97 98\nend\n", "merge 1 repeats merge 0"},
      {"tapegrad-tokenizer 1\ntype bpe\npretokenizer 1\nmerges 1\n97 -1\nend\n", "value -1 is outside"},
      {"tapegrad-tokenizer 1\ntype bpe\npretokenizer 1\nmerges 1\n97  98\nend\n", "expected 2 field(s)"},
      {"tapegrad-tokenizer 1\ntype bpe\npretokenizer 1\nmerges 1\n97 98\nend\nextra\n", "unexpected data after 'end'"},
      {"tapegrad-tokenizer 1\ntype bpe\npretokenizer 1\nmerges 99999999999999999999\n", "is not an integer"},
      {"tapegrad-tokenizer 1\ntype char\nvocab_size 2\n98\n97\nend\n", "strictly increasing"},
      {"tapegrad-tokenizer 1\ntype char\nvocab_size 1\n256\nend\n", "value 256 is outside [0, 255]"},
      {"tapegrad-tokenizer 1\ntype char\nvocab_size 0\nend\n", "value 0 is outside [1, 256]"},
  };
  for (const auto& [bytes, message] : cases) {
    CAPTURE(bytes);
    write_all(path, bytes);
    REQUIRE_THROWS_AS(load_tokenizer(path), io::FormatError);
    REQUIRE_THROWS_WITH(load_tokenizer(path), Catch::Contains(message) && Catch::Contains(path));
  }
}

TEST_CASE("Tokenizers: every truncation and byte flip of a file is caught or harmless", "[data][tokenizer][file]") {
  DataScratchDir dir;
  const std::string path = dir.file("t.tok");
  BpeTokenizer({{'a', 'b'}, {256, 'c'}, {' ', 257}}).save(path);
  const std::string good = read_all(path);
  const auto expected = BpeTokenizer::load(path).encode("abc abc");
  for (std::size_t n = 0; n < good.size(); ++n) {
    CAPTURE(n);
    write_all(path, good.substr(0, n));
    if (n + 1 == good.size()) {
      CHECK(load_tokenizer(path)->encode("abc abc") == expected);  // only the final newline is gone
    } else {
      REQUIRE_THROWS_AS(load_tokenizer(path), io::FormatError);
    }
  }
  Generator gen(11);
  for (std::size_t i = 0; i < good.size(); ++i) {
    std::string bad = good;
    bad[i] = static_cast<char>(gen.next_below(256));
    write_all(path, bad);
    try {
      const auto tok = load_tokenizer(path);  // a flip may still leave a valid file
      const std::string s = "abc abc";
      CHECK(tok->decode(tok->encode(s)) == s);
    } catch (const io::FormatError&) {
      // the expected outcome for most flips
    }
  }
}
