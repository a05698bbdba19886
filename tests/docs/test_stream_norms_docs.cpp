// test_stream_norms_docs.cpp — docs/residuals.md's section on the stream's size by depth quotes
// the committed run of examples/stream_norms (docs/residuals/stream_norms.csv) and shows its
// charts: every row of the page's table is what the file holds (the rms after the last block at
// init and trained, mean [min, max] over the seeds, and the validation loss, within the 3
// significant digits printed), for every design the file has, and the charts it names exist.
#include <algorithm>
#include <cmath>
#include <map>
#include <regex>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "support/docs.hpp"

using tapegrad::testing::csv_rows;
using tapegrad::testing::kDocsDir;
using tapegrad::testing::read_text;

namespace {

// One design's figures in the file: the rms after the last block at init and trained, and the
// trained models' validation loss, each over the seeds.
struct Figures {
  std::vector<double> at_init, trained, loss;
};

std::map<std::string, Figures> committed() {
  const auto rows = csv_rows(kDocsDir + "/residuals/stream_norms.csv");
  REQUIRE(rows.at(0) == std::vector<std::string>{"design", "seed", "steps", "layer", "rms", "val_loss"});
  std::int64_t last_layer = 0;
  for (std::size_t i = 1; i < rows.size(); ++i) last_layer = std::max<std::int64_t>(last_layer, std::stoll(rows[i].at(3)));
  std::map<std::string, Figures> out;
  for (std::size_t i = 1; i < rows.size(); ++i) {
    const auto& r = rows[i];
    if (std::stoll(r.at(3)) != last_layer) continue;
    Figures& f = out[r.at(0)];
    if (std::stoll(r.at(2)) == 0) {
      f.at_init.push_back(std::stod(r.at(4)));
    } else {
      f.trained.push_back(std::stod(r.at(4)));
      f.loss.push_back(std::stod(r.at(5)));
    }
  }
  return out;
}

double mean(const std::vector<double>& v) {
  double s = 0;
  for (double x : v) s += x;
  return s / static_cast<double>(v.size());
}

// "a [lo, hi]" of the page against the mean, min and max of v, each within its printed digits.
void check_cell(const std::string& what, const std::smatch& m, std::size_t first, const std::vector<double>& v) {
  INFO(what);
  REQUIRE(!v.empty());
  const double want[3] = {mean(v), *std::min_element(v.begin(), v.end()), *std::max_element(v.begin(), v.end())};
  for (std::size_t k = 0; k < 3; ++k) CHECK(std::stod(m[first + k]) == Approx(want[k]).epsilon(0.006));
}

// text as a regex that matches it literally ("Pre-LN + GPAS").
std::string literally(const std::string& text) {
  return std::regex_replace(text, std::regex(R"([.^$|()\[\]{}*+?\\])"), R"(\$&)");
}

}  // namespace

TEST_CASE("docs/residuals.md: the stream's size by depth is the committed run's", "[docs][stream]") {
  const std::string page = read_text(kDocsDir + "/residuals.md");
  const std::map<std::string, Figures> file = committed();
  REQUIRE(file.size() >= 7);
  const std::string number = "([0-9.e+-]+)", range = number + " \\[" + number + ", " + number + "\\]";
  for (const auto& [design, f] : file) {
    INFO("the table's row of " << design);
    std::smatch m;
    REQUIRE(std::regex_search(page, m, std::regex("\n\\| " + literally(design) + " \\| " + range + " \\| " + range + " \\| " + number + " \\|\n")));
    check_cell("at init", m, 1, f.at_init);
    check_cell("trained", m, 4, f.trained);
    // the page rounds the mean to 3 decimals, the file each loss to 4 digits: 0.0005 each
    CHECK(std::stod(m[7]) == Approx(mean(f.loss)).margin(0.0011));
  }
  for (const std::string chart : {"stream_norms_init.svg", "stream_norms_trained.svg"}) {
    CHECK(page.find("(residuals/" + chart + ")") != std::string::npos);
    CHECK(read_text(kDocsDir + "/residuals/" + chart).find("<svg") != std::string::npos);
  }
}
