// test_gpt2_tokenizer.cpp — Gpt2Tokenizer, gpt2_pretokenize and the byte alphabet against
// GPT-2's encoder.py (tests/reference/make_gpt2_bpe_reference.py wrote the vocab.json,
// merges.txt and expected ids of tests/reference/gpt2_bpe/), round trips on any bytes, the
// tokenizer file, and the errors of damaged vocab.json / merges.txt files.
#include <tapegrad/io/json.hpp>

#include "data_helpers.hpp"

using namespace tapegrad;
using namespace tapegrad::data;
using tapegrad::testing::DataScratchDir;
using tapegrad::testing::random_bytes;
using tapegrad::testing::read_all;
using tapegrad::testing::write_all;

namespace {

const std::string kDir = std::string(TAPEGRAD_REFERENCE_DIR) + "/gpt2_bpe/";

const Gpt2Tokenizer& reference_tokenizer() {
  static const Gpt2Tokenizer tok = Gpt2Tokenizer::from_files(kDir + "vocab.json", kDir + "merges.txt");
  return tok;
}

struct Case {
  std::string text;
  std::vector<std::string> pieces;
  std::vector<TokenId> ids;
};

std::vector<Case> reference_cases() {
  const std::string path = kDir + "expected.json";
  const io::json::Value root = io::json::parse(read_all(path), path);
  const io::json::Value* cases = root.find("cases");
  REQUIRE(cases != nullptr);
  std::vector<Case> out;
  for (const io::json::Value& c : cases->items) {
    Case one;
    one.text = c.find("text")->text;
    for (const io::json::Value& p : c.find("pieces")->items) one.pieces.push_back(p.text);
    for (const io::json::Value& id : c.find("ids")->items)
      one.ids.push_back(static_cast<TokenId>(io::json::to_uint64(id, path)));
    out.push_back(std::move(one));
  }
  return out;
}

// A vocab.json with the 256 byte tokens (id == byte) and then `extra` ("\"ab\": 256, ...").
std::string byte_vocab(const std::string& extra = "") {
  std::string out = "{";
  for (int b = 0; b < 256; ++b)
    out += (b ? ", " : "") + io::json::quote(bytes_to_unicode_string(std::string(1, static_cast<char>(b)))) +
           ": " + std::to_string(b);
  return out + extra + "}";
}

}  // namespace

TEST_CASE("gpt2 byte alphabet: encoder.py's bytes_to_unicode", "[data][gpt2]") {
  CHECK(byte_to_unicode('A') == U'A');
  CHECK(byte_to_unicode('!') == U'!');
  CHECK(byte_to_unicode(0) == U'\u0100');
  CHECK(byte_to_unicode('\n') == U'\u010a');
  CHECK(byte_to_unicode(' ') == U'\u0120');    // "Ġ", GPT-2's leading space
  CHECK(byte_to_unicode(0xad) == U'\u0143');   // the last non-printable byte
  CHECK(byte_to_unicode(0xe9) == U'\u00e9');
  CHECK(bytes_to_unicode_string(" the\n") == "ĠtheĊ");
  std::string all;
  for (int b = 0; b < 256; ++b) all += static_cast<char>(b);
  REQUIRE(unicode_string_to_bytes(bytes_to_unicode_string(all)) == all);
  CHECK(unicode_string_to_bytes("Ġ") == std::string(" "));
  CHECK_FALSE(unicode_string_to_bytes("漢").has_value());   // outside the alphabet
  CHECK_FALSE(unicode_string_to_bytes("\u0144").has_value());
  CHECK_FALSE(unicode_string_to_bytes(" ").has_value());    // a space is spelled Ġ
  CHECK_FALSE(unicode_string_to_bytes("\xc3").has_value());  // truncated UTF-8
}

TEST_CASE("gpt2 pretokenize: the pieces of the regex module's findall", "[data][gpt2]") {
  for (const Case& c : reference_cases()) {
    INFO("text: '" << c.text << "'");
    const std::vector<std::string_view> pieces = gpt2_pretokenize(c.text);
    REQUIRE(std::vector<std::string>(pieces.begin(), pieces.end()) == c.pieces);
  }
  CHECK(gpt2_pretokenize("I'm  here 123!!") ==
        std::vector<std::string_view>{"I", "'m", " ", " here", " 123", "!!"});
}

TEST_CASE("gpt2 pretokenize: invalid UTF-8 bytes become pieces of their own", "[data][gpt2]") {
  CHECK(gpt2_pretokenize("ab\xff\xfe cd\xc3") ==
        std::vector<std::string_view>{"ab", "\xff\xfe", " cd", "\xc3"});
  Generator gen(7);
  for (int trial = 0; trial < 200; ++trial) {
    const std::string s = random_bytes(gen.next_below(64), gen);
    std::string joined;
    for (std::string_view p : gpt2_pretokenize(s)) {
      REQUIRE_FALSE(p.empty());
      joined += p;
    }
    REQUIRE(joined == s);
  }
}

TEST_CASE("gpt2 pretokenize: long runs match in one piece (no PCRE2 stack limit)", "[data][gpt2]") {
  const std::string spaces(200000, ' ');
  const std::string letters(200000, 'x');
  CHECK(gpt2_pretokenize(spaces + "a") == std::vector<std::string_view>{spaces.substr(1), " a"});
  CHECK(gpt2_pretokenize(letters + "\n").size() == 2);
  const std::string text = spaces + letters + "Ωμέγα " + letters;
  CHECK(reference_tokenizer().decode(reference_tokenizer().encode(text)) == text);
}

TEST_CASE("gpt2 tokenizer: encode matches GPT-2's encoder.py on the reference corpus", "[data][gpt2]") {
  const Gpt2Tokenizer& tok = reference_tokenizer();
  CHECK(tok.name() == "gpt2");
  CHECK(tok.vocab_size() == 457);  // 256 bytes + 200 merges + <|endoftext|>
  CHECK(tok.merges().size() == 200);
  CHECK(tok.id_of("<|endoftext|>") == 456);
  const std::vector<Case> cases = reference_cases();
  REQUIRE(cases.size() == 29);
  for (const Case& c : cases) {
    INFO("text: '" << c.text << "'");
    REQUIRE(tok.encode(c.text) == c.ids);
    REQUIRE(tok.decode(c.ids) == c.text);
  }
}

TEST_CASE("gpt2 tokenizer: decode(encode(s)) == s for any bytes", "[data][gpt2]") {
  const Gpt2Tokenizer& tok = reference_tokenizer();
  Generator gen(11);
  for (int trial = 0; trial < 200; ++trial) {
    const std::string s = random_bytes(gen.next_below(100), gen);
    REQUIRE(tok.decode(tok.encode(s)) == s);
  }
  const std::string invalid = "caf\xc3 \xed\xa0\x80 surrogate, \xf0\x9f overlong \xc0\xaf.";
  CHECK(tok.decode(tok.encode(invalid)) == invalid);
  REQUIRE_THROWS_WITH(tok.decode(std::vector<TokenId>{1, 457}),
                      Catch::Contains("id 457 at position 1 is outside [0, 457)"));
}

TEST_CASE("gpt2 tokenizer: save and load_tokenizer read it back", "[data][gpt2]") {
  const Gpt2Tokenizer& tok = reference_tokenizer();
  DataScratchDir dir;
  tok.save(dir.file("gpt2.tok"));
  const std::unique_ptr<Tokenizer> again = load_tokenizer(dir.file("gpt2.tok"));
  CHECK(again->name() == "gpt2");
  CHECK(again->vocab_size() == tok.vocab_size());
  const Gpt2Tokenizer direct = Gpt2Tokenizer::load(dir.file("gpt2.tok"));
  CHECK(direct.merges() == tok.merges());
  for (const Case& c : reference_cases()) REQUIRE(again->encode(c.text) == c.ids);

  // Damaged files: a FormatError naming the file and line.
  const std::string good = read_all(dir.file("gpt2.tok"));
  const auto damaged = [&](std::string text) {
    write_all(dir.file("bad.tok"), text);
    return dir.file("bad.tok");
  };
  std::string bad_hex = good;
  bad_hex.replace(bad_hex.find("\n21\n") + 1, 2, "zz");  // token 0, '!'
  REQUIRE_THROWS_WITH(load_tokenizer(damaged(bad_hex)), Catch::Contains("bad.tok', line 4: token 0") &&
                                                            Catch::Contains("expected lowercase hex bytes"));
  std::string bad_merge = good;
  bad_merge.replace(bad_merge.find("merges 200\n") + 11, 0, "0 0\n");
  REQUIRE_THROWS_AS(load_tokenizer(damaged(bad_merge)), io::FormatError);
  REQUIRE_THROWS_WITH(load_tokenizer(damaged(good.substr(0, good.size() / 2))), Catch::Contains("bad.tok"));
  REQUIRE_THROWS_WITH(Gpt2Tokenizer::load(damaged(read_all(dir.file("gpt2.tok")).replace(26, 4, "char"))),
                      Catch::Contains("not a gpt2 tokenizer"));
}

TEST_CASE("gpt2 tokenizer: a tiny vocabulary merges by rank, not by order of appearance", "[data][gpt2]") {
  // "ab" and "bc" both apply to "abc"; the lower rank wins. Merges: b c (rank 0), a b (rank 1).
  const std::string vocab = byte_vocab(R"(, "bc": 256, "ab": 257, "abc": 258, "Ġabc": 259)");
  const Gpt2Tokenizer tok = Gpt2Tokenizer::from_strings(vocab, "#version: 0.2\nb c\na b\na bc\nĠ abc\n");
  CHECK(tok.encode("abc") == std::vector<TokenId>{258});
  CHECK(tok.encode("ab") == std::vector<TokenId>{257});
  CHECK(tok.encode(" abc abd") == std::vector<TokenId>{259, ' ', 257, 'd'});
  CHECK(tok.encode("bcbc") == std::vector<TokenId>{256, 256});
  // Without the "#version" line the first line is a merge (encoder.py would drop it).
  CHECK(Gpt2Tokenizer::from_strings(vocab, "b c").merges().size() == 1);
}

TEST_CASE("gpt2 tokenizer: damaged vocab.json and merges.txt name the problem", "[data][gpt2]") {
  const auto vocab_error = [](const std::string& vocab) {
    try {
      (void)Gpt2Tokenizer::from_strings(vocab, "", "v.json", "m.txt");
    } catch (const io::FormatError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  using Catch::Contains;
  CHECK_THAT(vocab_error("{\"a\": 0,}"), Contains("'v.json'"));
  CHECK_THAT(vocab_error("[1, 2]"), Contains("expected a JSON object {token: id}, got an array"));
  CHECK_THAT(vocab_error("{\"a\": \"0\"}"), Contains("entry 0 ('a'): the id is a string, not an integer"));
  CHECK_THAT(vocab_error("{\"a\": -1}"), Contains("entry 0 ('a')"));
  CHECK_THAT(vocab_error("{\"a\": 1.5}"), Contains("entry 0 ('a')"));
  CHECK_THAT(vocab_error(byte_vocab(", \"ab\": 300")), Contains("entry 256 ('ab'): id 300 is outside [0, 257)"));
  CHECK_THAT(vocab_error(byte_vocab(", \"ab\": 5")), Contains("id 5 is used twice"));
  CHECK_THAT(vocab_error(byte_vocab(", \"a b\": 256")), Contains("not a token in GPT-2's byte alphabet"));
  CHECK_THAT(vocab_error(byte_vocab(", \"漢\": 256")), Contains("not a token in GPT-2's byte alphabet"));
  CHECK_THAT(vocab_error(byte_vocab(", \"\": 256")), Contains("entry 256 (''): not a token"));
  CHECK_THAT(vocab_error("{\"a\": 0}"), Contains("'v.json'") && Contains("is not a token; all 256 bytes must be"));

  const auto merges_error = [](const std::string& merges) {
    try {
      (void)Gpt2Tokenizer::from_strings(byte_vocab(R"(, "ab": 256, "abc": 257)"), merges, "v.json", "m.txt");
    } catch (const io::FormatError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  CHECK(merges_error("#version: 0.2\na b\nab c\n") == "no error");
  CHECK_THAT(merges_error("#version: 0.2\nab\n"), Contains("'m.txt':2: expected two tokens separated by one space, got 'ab'"));
  CHECK_THAT(merges_error("a b\n\nab c\n"), Contains("'m.txt':2: expected two tokens"));
  CHECK_THAT(merges_error("a  b\n"), Contains("'m.txt':1: expected two tokens"));
  CHECK_THAT(merges_error("a b c\n"), Contains("'m.txt':1: expected two tokens"));
  CHECK_THAT(merges_error("a b\nab d\nx y\n"), Contains("'m.txt':2: merging 'ab' and 'd' gives 'abd', which is not in the vocabulary"));
  CHECK_THAT(merges_error("a b\nabc d\n"), Contains("'m.txt':2: merging 'abc' and 'd'"));
  CHECK_THAT(merges_error("a zz\n"), Contains("'m.txt':1: 'zz' is not in the vocabulary"));
  CHECK_THAT(merges_error("a 漢\n"), Contains("'m.txt':1: '漢' is not a token in GPT-2's byte alphabet"));
  CHECK_THAT(merges_error("a b\na b\n"), Contains("'m.txt':2: the merge 'a b' repeats merge 0"));
  CHECK_THAT(merges_error("a b\r\n"), Contains("'m.txt':1: 'b?' is not"));
  DataScratchDir dir;
  REQUIRE_THROWS_AS(Gpt2Tokenizer::from_files(dir.file("missing.json"), dir.file("m.txt")), io::IoError);
}

TEST_CASE("gpt2 tokenizer: the example of docs/data.md", "[data][gpt2][docs]") {
  const std::string dir = kDir;
  DataScratchDir scratch;
  const std::string path = scratch.file("gpt2.tok");
#include "../../docs/snippets/data_gpt2.inc"
  CHECK(text == "the lazy dog's café");
  CHECK(ids.size() < text.size());
  CHECK(pieces == std::vector<std::string_view>{"I", "'m", " ", " here", " 123", "!!"});
  CHECK(load_tokenizer(path)->encode(text) == ids);
}

TEST_CASE("gpt2 tokenizer: the corpus of fuzzer findings gives FormatError", "[data][gpt2][corpus]") {
  namespace fs = std::filesystem;
  const fs::path corpus = fs::path(TAPEGRAD_REFERENCE_DIR) / ".." / "io" / "corpus";
  const std::string vocab = read_all(kDir + "vocab.json");
  int files = 0;
  for (const char* kind : {"gpt2_vocab", "gpt2_merges", "tokenizer"}) {
    REQUIRE(fs::is_directory(corpus / kind));
    for (const auto& entry : fs::directory_iterator(corpus / kind)) {
      if (!entry.is_regular_file()) continue;
      ++files;
      INFO(entry.path().string());
      const std::string bytes = read_all(entry.path().string());
      const std::string k = kind;
      if (k == "gpt2_vocab") REQUIRE_THROWS_AS(Gpt2Tokenizer::from_strings(bytes, ""), io::FormatError);
      if (k == "gpt2_merges") REQUIRE_THROWS_AS(Gpt2Tokenizer::from_strings(vocab, bytes), io::FormatError);
      if (k == "tokenizer") REQUIRE_THROWS_AS(load_tokenizer(entry.path().string()), io::FormatError);
    }
  }
  CHECK(files >= 8);
}
