// test_text_corpus.cpp — MappedFile, the default corpus, Corpus, TokenStream windows and
// splits, the evaluation iterator, and TokenWindowDataset with a DataLoader.
#include <filesystem>
#include <numeric>

#include "data_helpers.hpp"

using namespace tapegrad;
using namespace tapegrad::data;
using tapegrad::testing::DataScratchDir;
using tapegrad::testing::write_all;

namespace {

// 1000 bytes cycling through the printable ASCII range.
std::string sample_text() {
  std::string s;
  for (int i = 0; i < 1000; ++i) s += static_cast<char>(' ' + (i * 7) % 95);
  return s;
}

}  // namespace

TEST_CASE("MappedFile: maps the bytes, and names missing, empty and directory paths", "[data][corpus]") {
  DataScratchDir dir;
  const std::string text = sample_text() + std::string(1, '\0') + "\xff";
  write_all(dir.file("a.txt"), text);
  MappedFile file(dir.file("a.txt"));
  CHECK(file.size() == static_cast<std::int64_t>(text.size()));
  CHECK(file.bytes() == text);
  MappedFile moved(std::move(file));
  CHECK(moved.bytes() == text);
  CHECK(file.bytes().empty());  // NOLINT(bugprone-use-after-move): a moved-from file is empty
  CHECK(moved.path() == dir.file("a.txt"));

  REQUIRE_THROWS_AS(MappedFile(dir.file("missing.txt")), io::IoError);
  REQUIRE_THROWS_WITH(MappedFile(dir.file("missing.txt")),
                      Catch::Contains("cannot open") && Catch::Contains("missing.txt") && Catch::Contains("No such file"));
  write_all(dir.file("empty.txt"), "");
  REQUIRE_THROWS_WITH(MappedFile(dir.file("empty.txt")), Catch::Contains("empty.txt': the file is empty"));
  REQUIRE_THROWS_WITH(MappedFile(dir.path()), Catch::Contains("it is a directory"));
}

TEST_CASE("default_corpus_paths: the licence texts, sorted and without duplicates", "[data][corpus]") {
  const std::vector<std::string> paths = default_corpus_paths();
  CHECK(std::is_sorted(paths.begin(), paths.end()));
  CHECK(std::adjacent_find(paths.begin(), paths.end()) == paths.end());
  for (const std::string& p : paths) {
    CHECK(std::filesystem::is_regular_file(p));
    CHECK(!std::filesystem::is_symlink(p));
  }
  const Corpus corpus = Corpus::default_corpus();
  CHECK(corpus.num_bytes() > 10000);
  if (std::filesystem::is_regular_file("/usr/share/common-licenses/GPL-3")) {
    CHECK(std::find(paths.begin(), paths.end(), std::filesystem::canonical("/usr/share/common-licenses/GPL-3").string()) !=
          paths.end());
    CHECK(corpus.names() == paths);
  } else if (paths.empty()) {
    // The fallback: the project's own grammar, the same text everywhere.
    CHECK(corpus.texts().size() == 1);
    CHECK(corpus.texts()[0] == grammar_text(kFallbackCorpusBytes, 0));
  }
}

TEST_CASE("Corpus: files in order, owned text, errors", "[data][corpus]") {
  DataScratchDir dir;
  write_all(dir.file("1.txt"), "first\n");
  write_all(dir.file("2.txt"), "second\n");
  Corpus corpus = Corpus::from_files({dir.file("2.txt"), dir.file("1.txt")});
  Corpus moved = std::move(corpus);
  CHECK(moved.texts() == std::vector<std::string_view>{"second\n", "first\n"});
  CHECK(moved.num_bytes() == 13);
  const Corpus owned = Corpus::from_text("abc", "mine");
  CHECK(owned.texts() == std::vector<std::string_view>{"abc"});
  CHECK(owned.names() == std::vector<std::string>{"mine"});
  REQUIRE_THROWS_WITH(Corpus::from_files({}), Catch::Contains("no files given"));
  REQUIRE_THROWS_AS(Corpus::from_files({dir.file("1.txt"), dir.file("nope.txt")}), io::IoError);
}

TEST_CASE("TokenStream: split at a token boundary, windows shifted by one, seeded", "[data][corpus]") {
  DataScratchDir dir;
  const std::string text = sample_text();
  write_all(dir.file("a.txt"), text.substr(0, 600));
  write_all(dir.file("b.txt"), text.substr(600));
  const Corpus corpus = Corpus::from_files({dir.file("a.txt"), dir.file("b.txt")});
  const auto tok = CharTokenizer::from_texts(corpus.texts());
  const TokenStream stream(corpus, tok, 0.1);
  CHECK(stream.num_tokens() == 1000);
  CHECK(stream.size(Split::train) == 900);
  CHECK(stream.size(Split::val) == 100);
  const auto all = tok.encode(text);
  const auto train = stream.tokens(Split::train), val = stream.tokens(Split::val);
  CHECK(std::equal(train.begin(), train.end(), all.begin()));
  CHECK(std::equal(val.begin(), val.end(), all.begin() + 900));

  const std::int64_t B = 16, T = 32;
  for (Split split : {Split::train, Split::val}) {
    Generator gen(3);
    const Batch b = stream.sample_batch(split, B, T, gen);
    REQUIRE(b.inputs.shape() == Shape{B, T});
    REQUIRE(b.targets.shape() == Shape{B, T});
    CHECK(b.inputs.dtype() == DType::int64);
    const auto x = b.inputs.to_vector<std::int64_t>(), y = b.targets.to_vector<std::int64_t>();
    const auto source = stream.tokens(split);
    REQUIRE(b.indices.size() == static_cast<std::size_t>(B));
    for (std::int64_t r = 0; r < B; ++r) {
      const std::int64_t start = b.indices[static_cast<std::size_t>(r)];
      REQUIRE(start >= 0);
      REQUIRE(start + T + 1 <= static_cast<std::int64_t>(source.size()));  // within the split
      for (std::int64_t t = 0; t < T; ++t) {
        CHECK(x[r * T + t] == source[start + t]);
        CHECK(y[r * T + t] == source[start + t + 1]);
        if (t + 1 < T) CHECK(y[r * T + t] == x[r * T + t + 1]);
      }
    }
    // Same seed, same batch; the generator moves on.
    Generator again(3);
    CHECK(stream.sample_batch(split, B, T, again).inputs.to_vector<std::int64_t>() == x);
    CHECK(stream.sample_batch(split, B, T, again).inputs.to_vector<std::int64_t>() != x);
  }
  // The first and last valid starts are both drawn over many samples.
  Generator gen(0);
  std::int64_t lo = 1000, hi = -1;
  for (int i = 0; i < 200; ++i)
    for (std::int64_t s : stream.sample_batch(Split::val, 8, 90, gen).indices) lo = std::min(lo, s), hi = std::max(hi, s);
  CHECK(lo == 0);
  CHECK(hi == 100 - 91);
}

TEST_CASE("TokenStream: errors name the split and sizes", "[data][corpus]") {
  std::vector<TokenId> tokens(50);
  std::iota(tokens.begin(), tokens.end(), 0);
  const TokenStream stream(tokens, 0.2);
  CHECK(stream.size(Split::val) == 10);
  Generator gen(0);
  REQUIRE_THROWS_WITH(stream.sample_batch(Split::val, 2, 10, gen),
                      Catch::Contains("the val split has 10 tokens, too few for a window of T + 1 = 11"));
  CHECK(stream.sample_batch(Split::val, 2, 9, gen).inputs.to_vector<std::int64_t>() ==
        std::vector<std::int64_t>{40, 41, 42, 43, 44, 45, 46, 47, 48, 40, 41, 42, 43, 44, 45, 46, 47, 48});
  REQUIRE_THROWS_WITH(stream.sample_batch(Split::train, 0, 4, gen), Catch::Contains("B and T must be >= 1"));
  REQUIRE_THROWS_WITH(TokenStream(tokens, 1.0), Catch::Contains("val_fraction must be in [0, 1)"));
  REQUIRE_THROWS_AS(TokenStream(tokens, -0.1), ValueError);
  REQUIRE_THROWS_WITH(TokenStream(std::vector<TokenId>{}, 0.1), Catch::Contains("there are no tokens"));
  CHECK(TokenStream(tokens, 0.0).size(Split::val) == 0);
}

TEST_CASE("TokenStream: the evaluation iterator walks the split in order", "[data][corpus]") {
  std::vector<TokenId> tokens(100);
  std::iota(tokens.begin(), tokens.end(), 0);
  const TokenStream stream(tokens, 0.3);  // val = 70..99 (30 tokens)
  WindowIterator it = stream.windows(Split::val, 2, 4);
  CHECK(it.num_windows() == 7);  // (30 - 1) / 4
  CHECK(it.num_batches() == 4);
  Batch b;
  std::vector<std::int64_t> starts, rows;
  while (it.next(b)) {
    rows.push_back(b.inputs.size(0));
    starts.insert(starts.end(), b.indices.begin(), b.indices.end());
    const auto x = b.inputs.to_vector<std::int64_t>(), y = b.targets.to_vector<std::int64_t>();
    for (std::size_t r = 0; r < b.indices.size(); ++r)
      for (std::size_t t = 0; t < 4; ++t) {
        CHECK(x[r * 4 + t] == 70 + b.indices[r] + static_cast<std::int64_t>(t));
        CHECK(y[r * 4 + t] == x[r * 4 + t] + 1);
      }
  }
  CHECK(rows == std::vector<std::int64_t>{2, 2, 2, 1});
  CHECK(starts == std::vector<std::int64_t>{0, 4, 8, 12, 16, 20, 24});
  CHECK(!it.next(b));
  it.reset();
  REQUIRE(it.next(b));
  CHECK(b.indices == std::vector<std::int64_t>{0, 4});
  CHECK(TokenStream(tokens, 0.0).windows(Split::val, 2, 4).num_windows() == 0);
}

TEST_CASE("TokenWindowDataset: windows as examples for a DataLoader", "[data][corpus]") {
  std::vector<TokenId> tokens(41);
  std::iota(tokens.begin(), tokens.end(), 100);
  auto stream = std::make_shared<const TokenStream>(tokens, 0.0);
  auto data = std::make_shared<TokenWindowDataset>(stream, Split::train, 8);
  CHECK(data->size() == 5);
  const Example e = data->get(2);
  CHECK(e.input.to_vector<std::int64_t>() == std::vector<std::int64_t>{116, 117, 118, 119, 120, 121, 122, 123});
  CHECK(e.target.to_vector<std::int64_t>() == std::vector<std::int64_t>{117, 118, 119, 120, 121, 122, 123, 124});
  REQUIRE_THROWS_WITH(data->get(5), Catch::Contains("index 5 is out of range for 5 windows"));

  DataLoader loader(data, DataLoaderOptions().batch_size(2).shuffle(true).seed(1).prefetch(true));
  const Batch b = loader.next();
  REQUIRE(b.inputs.shape() == Shape{2, 8});
  const auto x = b.inputs.to_vector<std::int64_t>();
  for (std::size_t r = 0; r < 2; ++r) CHECK(x[r * 8] == 100 + 8 * b.indices[r]);
}
