// test_residual_stream_docs.cpp — docs/residual-stream.md says what is true: its code block is
// the snippet compiled here, which prints what the page shows and whose lens ends on the model's
// own loss; and every number and comparison it quotes from the committed run of
// examples/logit_lens (docs/residual-stream/*.csv) is what those files hold.
#include <algorithm>
#include <cmath>
#include <iomanip>
#include <iostream>
#include <map>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include <catch2/catch.hpp>
#include <tapegrad/tapegrad.hpp>

#include "support/docs.hpp"

using namespace tapegrad;
using tapegrad::testing::cpp_blocks;
using tapegrad::testing::csv_rows;
using tapegrad::testing::kDocsDir;
using tapegrad::testing::read_text;

namespace {

const std::string kPage = kDocsDir + "/residual-stream.md";
const std::string kRun = kDocsDir + "/residual-stream";

// One layer of the committed lens: the loss as the CSV writes it (4 significant digits), the
// top-1 agreement, and the run's unigram baseline.
struct Layer {
  std::string loss_text;
  double loss = 0, agreement = 0, baseline = 0;
};

// logit_lens.csv as [placement label][layer].
std::map<std::string, std::vector<Layer>> committed_lens() {
  std::map<std::string, std::vector<Layer>> lens;
  const auto rows = csv_rows(kRun + "/logit_lens.csv");
  REQUIRE(rows.at(0) == std::vector<std::string>{"placement", "layer", "loss", "top1_agreement", "unigram_baseline"});
  for (std::size_t i = 1; i < rows.size(); ++i) {
    auto& layers = lens[rows[i].at(0)];
    REQUIRE(std::stoul(rows[i].at(1)) == layers.size());
    layers.push_back({rows[i].at(2), std::stod(rows[i].at(2)), std::stod(rows[i].at(3)), std::stod(rows[i].at(4))});
  }
  return lens;
}

// The first match of pattern in the page, its groups as numbers; fails the test without one.
std::vector<double> quoted(const std::string& page, const std::string& pattern) {
  std::smatch m;
  INFO("docs/residual-stream.md says no longer: " << pattern);
  REQUIRE(std::regex_search(page, m, std::regex(pattern)));
  std::vector<double> numbers;
  for (std::size_t i = 1; i < m.size(); ++i) numbers.push_back(std::stod(m[i]));
  return numbers;
}

// writes.csv or heads.csv: the rows of one placement, without the header.
std::vector<std::vector<std::string>> rows_of(const std::string& file, const std::string& placement) {
  std::vector<std::vector<std::string>> out;
  for (const auto& row : csv_rows(kRun + "/" + file))
    if (row.at(0) == placement) out.push_back(row);
  return out;
}

}  // namespace

TEST_CASE("docs/residual-stream.md: the block is the snippet, and prints what the page shows",
          "[docs][residual_stream]") {
  const auto blocks = cpp_blocks(read_text(kPage));
  REQUIRE(blocks.size() == 1);
  CHECK(blocks[0] == read_text(kDocsDir + "/snippets/residual_stream.inc"));

  std::ostringstream captured;
  std::streambuf* old = std::cout.rdbuf(captured.rdbuf());
#include "../../docs/snippets/residual_stream.inc"
  std::cout.rdbuf(old);
  std::cout << std::setprecision(6);  // as it was
  INFO("the snippet printed, and the page's text block must show:\n" << captured.str());
  CHECK(read_text(kPage).find(captured.str()) != std::string::npos);
  // The page's claims about it: one row per sublayer, per attention, per depth 0..L; the
  // last layer of the lens is the model's own loss, to the bit.
  REQUIRE(sublayers.writes().size() == 8);
  for (const nn::ResidualWrite& w : sublayers.writes()) CHECK(w.ratio == w.output_norm / w.input_norm);
  REQUIRE(heads.writes().size() == 4);
  const auto layers = lens.layers();
  REQUIRE(layers.size() == 5);
  CHECK(layers[4].loss == cross_entropy(logits.reshape({8, 32}), targets.reshape({8})).item());
  CHECK(layers[4].top1_agreement == 1.0);
}

TEST_CASE("docs/residual-stream.md: the committed run's table is the CSV's", "[docs][residual_stream]") {
  const auto lens = committed_lens();
  REQUIRE(lens.count("Pre-LN"));
  REQUIRE(lens.count("Post-LN"));
  const std::string page = read_text(kPage);
  // The page's table: | layer | Pre-LN loss | Pre-LN top-1 | Post-LN loss | Post-LN top-1 |
  static const std::regex row(R"(\n\| (\d+) \| ([0-9.]+) \| (\d+)% \| ([0-9.]+) \| (\d+)% \|)");
  std::size_t seen = 0;
  for (std::sregex_iterator it(page.begin(), page.end(), row), end; it != end; ++it, ++seen) {
    const std::size_t l = std::stoul((*it)[1]);
    INFO("the page's row for layer " << l);
    REQUIRE(l < lens.at("Pre-LN").size());
    CHECK((*it)[2] == lens.at("Pre-LN")[l].loss_text);
    CHECK(std::stod((*it)[3]) == std::round(100 * lens.at("Pre-LN")[l].agreement));
    CHECK((*it)[4] == lens.at("Post-LN")[l].loss_text);
    CHECK(std::stod((*it)[5]) == std::round(100 * lens.at("Post-LN")[l].agreement));
  }
  CHECK(seen == lens.at("Pre-LN").size());
  const std::string svg = read_text(kRun + "/logit_lens.svg");
  CHECK(svg.find("Pre-LN") != std::string::npos);
  CHECK(svg.find("Post-LN") != std::string::npos);
}

TEST_CASE("docs/residual-stream.md: what the page reads in the committed run is in its CSV files",
          "[docs][residual_stream]") {
  const auto lens = committed_lens();
  // The page with its line breaks and indents as single spaces: a sentence may wrap anywhere.
  const std::string page = std::regex_replace(read_text(kPage), std::regex(R"(\s+)"), " ");
  const auto& pre = lens.at("Pre-LN");
  const auto& post = lens.at("Post-LN");
  const std::size_t L = pre.size() - 1;
  REQUIRE(post.size() == pre.size());

  // Pre-LN predicts after its first block...
  auto q = quoted(page, R"(decodes to within ([0-9.]+) nats of the model's final loss, and its top prediction is already )"
                        R"(the last layer's for (\d+)% of the tokens)");
  CHECK(std::abs(q[0] - (pre[1].loss - pre[L].loss)) <= 0.005);
  CHECK(q[1] == std::round(100 * pre[1].agreement));
  // ... Post-LN to the end: every block lowers the lens, the last step the largest after the first.
  q = quoted(page, R"(After block 1 its decoded loss is ([0-9.]+) nats above the final one and its top prediction )"
                   R"(agrees with the last layer's on (\d+)% of the tokens)");
  CHECK(std::abs(q[0] - (post[1].loss - post[L].loss)) <= 0.005);
  CHECK(q[1] == std::round(100 * post[1].agreement));
  CHECK(page.find("every block lowers the lens, and the last block takes the largest step after the first") !=
        std::string::npos);
  for (std::size_t l = 1; l < L; ++l) {
    INFO("Post-LN, block " << l + 1);
    CHECK(post[l + 1].loss < post[l].loss);
    if (l + 1 < L) CHECK(post[l].loss - post[l + 1].loss < post[L - 1].loss - post[L].loss);
  }
  // The embeddings decode worse than the unigram baseline in both.
  CHECK(page.find("The embeddings alone (layer 0) decode worse than the unigram baseline") != std::string::npos);
  CHECK(pre[0].loss > pre[0].baseline);
  CHECK(post[0].loss > post[0].baseline);

  // The writes: Pre-LN's first FFN replaces the stream, the later sublayers nudge it; Post-LN's
  // writes are a share of a normalized stream at every depth.
  const auto pre_writes = rows_of("writes.csv", "Pre-LN"), post_writes = rows_of("writes.csv", "Post-LN");
  REQUIRE(pre_writes.size() == 2 * L);
  REQUIRE(pre_writes[1].at(2) == "ffn");
  q = quoted(page, R"(first FFN writes (\d+) times the stream it reads)");
  CHECK(q[0] == std::round(std::stod(pre_writes[1].at(5))));
  q = quoted(page, R"(every later sublayer writes under (\d+)% of the stream)");
  for (std::size_t i = 2; i < pre_writes.size(); ++i) CHECK(std::stod(pre_writes[i].at(5)) < q[0] / 100);
  q = quoted(page, R"(Every write is (\d+)% to (\d+)% of the stream it reads, at every depth)");
  for (const auto& w : post_writes) {
    INFO(w.at(1) << " " << w.at(2) << " ratio " << w.at(5));
    CHECK(std::stod(w.at(5)) >= q[0] / 100);
    CHECK(std::stod(w.at(5)) < (q[1] + 1) / 100);
  }
  // Pre-LN: every FFN's read-write cosine above every attention's.
  CHECK(page.find("every FFN's read-write cosine is above every attention's") != std::string::npos);
  double lowest_ffn = INFINITY, highest_attn = -INFINITY;
  for (const auto& w : pre_writes) {
    const double cosine = std::stod(w.at(6));
    if (w.at(2) == "ffn") lowest_ffn = std::min(lowest_ffn, cosine);
    else highest_attn = std::max(highest_attn, cosine);
  }
  CHECK(lowest_ffn > highest_attn);
  q = quoted(page, R"(across the stream they read \(\|cos\| under ([0-9.]+)\), the FFNs along it \(cos ([0-9.]+) to ([0-9.]+)\))");
  for (const auto& w : pre_writes) {
    const double cosine = std::stod(w.at(6));
    INFO(w.at(1) << " " << w.at(2) << " cos " << cosine);
    if (w.at(2) == "ffn") CHECK((std::abs(cosine - q[1]) <= 0.005 || cosine > q[1]));
    if (w.at(2) == "ffn") CHECK((std::abs(cosine - q[2]) <= 0.005 || cosine < q[2]));
    if (w.at(2) == "attn") CHECK(std::abs(cosine) < q[0]);
  }
  // The heads: in every attention the loudest head writes at least 1.5 times the quietest.
  q = quoted(page, R"(the loudest head writes at least ([0-9.]+) times what the quietest one does)");
  for (const char* placement : {"Pre-LN", "Post-LN"}) {
    std::map<std::string, std::vector<double>> norms;  // attention -> its heads
    for (const auto& h : rows_of("heads.csv", placement)) norms[h.at(1)].push_back(std::stod(h.at(3)));
    REQUIRE(norms.size() == L);
    for (const auto& [attention, heads] : norms) {
      INFO(placement << " " << attention);
      CHECK(*std::max_element(heads.begin(), heads.end()) >= q[0] * *std::min_element(heads.begin(), heads.end()));
    }
  }
}
