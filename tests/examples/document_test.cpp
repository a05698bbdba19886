// Tests of study::Document (examples/common/document.hpp), report.md and report.html, and of
// the LineChart options the reports use (log x axis, error bars, markers, faint). A program of
// its own, linked with tapegrad_report (not named test_*.cpp, so tapegrad_tests leaves it out).
// That a browser draws the page is tests/examples/render_html.sh's part.
#include <catch2/catch.hpp>

#include <cmath>
#include <regex>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "common/document.hpp"

using Catch::Matchers::Contains;
using study::Document;
using study::LineChart;
using study::Verdict;

namespace {

// How many times needle occurs in s.
std::size_t count(const std::string& s, const std::string& needle) {
  std::size_t n = 0;
  for (std::size_t at = s.find(needle); at != std::string::npos; at = s.find(needle, at + 1)) ++n;
  return n;
}

LineChart small_chart() {
  LineChart c{"Loss <by> step", "step", "loss"};
  c.series.push_back({"Pre-LN", {1, 2, 3}, {3, 2, 1}});
  return c;
}

Document sample() {
  Document doc("Depth & <study>");
  doc.paragraph("The **setup**: `depth_study --depths 6,12` with *tiny* sizes; a < b & \"c\".");
  doc.heading("Claim 1: Post-LN loses its gradient");
  study::Table t({"placement", "ratio"});
  t.add({"post", "0.01"});
  doc.table(t, "ratio at init");
  doc.chart(small_chart(), "loss.svg");
  doc.verdict(Verdict::supported, "at 24 layers, **0.01**");
  doc.heading("Details", 3);
  doc.bullets({"one", "two `x`"});
  doc.heading("Claim 1: Post-LN loses its gradient");  // the same words again: another id
  doc.verdict(Verdict::not_supported, "no");
  doc.verdict(Verdict::depends, "on the init");
  doc.verdict(Verdict::not_measured, "a smoke run");
  doc.heading("Reproduce");
  doc.code("depth_study --full <out>");
  return doc;
}

}  // namespace

TEST_CASE("Document::markdown writes each block as GitHub Markdown", "[study]") {
  const std::string expected =
      "# Depth & <study>\n"
      "\n"
      "The **setup**: `depth_study --depths 6,12` with *tiny* sizes; a < b & \"c\".\n"
      "\n"
      "## Claim 1: Post-LN loses its gradient\n"
      "\n"
      "*ratio at init*\n"
      "\n"
      "| placement | ratio |\n"
      "|---|---|\n"
      "| post | 0.01 |\n"
      "\n"
      "![Loss <by> step](loss.svg)\n"
      "\n"
      "**Verdict: supported.** at 24 layers, **0.01**\n"
      "\n"
      "### Details\n"
      "\n"
      "- one\n"
      "- two `x`\n"
      "\n"
      "## Claim 1: Post-LN loses its gradient\n"
      "\n"
      "**Verdict: not supported.** no\n"
      "\n"
      "**Verdict: depends.** on the init\n"
      "\n"
      "**Verdict: not measured.** a smoke run\n"
      "\n"
      "## Reproduce\n"
      "\n"
      "```\n"
      "depth_study --full <out>\n"
      "```\n";
  CHECK(sample().markdown() == expected);
}

TEST_CASE("Document::markdown keeps fences and captions from being closed by the text", "[study]") {
  Document doc("T");
  doc.code("a ``` b");
  doc.table(study::Table({"x"}), "mean over *3* seeds");
  const std::string md = doc.markdown();
  CHECK_THAT(md, Contains("````\na ``` b\n````\n"));
  CHECK_THAT(md, Contains("_mean over *3* seeds_\n"));
}

TEST_CASE("Document::html escapes text and renders the inline Markdown", "[study]") {
  const std::string html = sample().html();
  for (const char* fragment : {
           "<title>Depth &amp; &lt;study&gt;</title>",
           "<h1>Depth &amp; &lt;study&gt;</h1>",
           "<p>The <strong>setup</strong>: <code>depth_study --depths 6,12</code> with <em>tiny</em> sizes; "
           "a &lt; b &amp; &quot;c&quot;.</p>",
           "<pre><code>depth_study --full &lt;out&gt;</code></pre>",
           "<li>two <code>x</code></li>",
           "<figcaption>ratio at init</figcaption>",
           "<tr><td>post</td><td>0.01</td></tr>",
       })
    CHECK_THAT(html, Contains(fragment));

  Document doc("T");
  doc.paragraph("<script>alert(1)</script> **not closed, 2 * 3, `a*b*c` and *x*");
  const std::string p = doc.html();
  CHECK_THAT(p, Contains("<p>&lt;script&gt;alert(1)&lt;/script&gt; **not closed, 2 * 3, <code>a*b*c</code> and <em>x</em></p>"));
}

TEST_CASE("Document::html links its level 2 headings from a table of contents", "[study]") {
  const std::string html = sample().html();
  CHECK_THAT(html, Contains("<h2 id=\"claim-1-post-ln-loses-its-gradient\">"));
  CHECK_THAT(html, Contains("<h2 id=\"claim-1-post-ln-loses-its-gradient-1\">"));  // GitHub's -1 for a repeat
  CHECK_THAT(html, Contains("<h3 id=\"details\">Details</h3>"));
  CHECK_THAT(html, Contains("<nav class=\"toc\""));
  CHECK_THAT(html, Contains("<li><a href=\"#claim-1-post-ln-loses-its-gradient\">Claim 1: Post-LN loses its gradient</a></li>\n"
                            "<li><a href=\"#claim-1-post-ln-loses-its-gradient-1\">Claim 1: Post-LN loses its gradient</a></li>\n"
                            "<li><a href=\"#reproduce\">Reproduce</a></li>\n</ol>"));
  CHECK(count(html, "href=\"#") == 3);  // no entry for the level 3 heading
  CHECK_THAT(Document("No sections").html(), !Contains("<nav"));
  Document bad("T");
  CHECK_THROWS_AS(bad.heading("Title again", 1), std::invalid_argument);
  CHECK_THROWS_AS(bad.heading("Too deep", 7), std::invalid_argument);
}

TEST_CASE("Document::html gives each verdict its badge class", "[study]") {
  const std::string html = sample().html();
  CHECK_THAT(html, Contains("<p class=\"verdict verdict-supported\"><span class=\"badge\">Verdict: supported.</span> at 24 "
                            "layers, <strong>0.01</strong></p>"));
  CHECK_THAT(html, Contains("class=\"verdict verdict-not-supported\"><span class=\"badge\">Verdict: not supported.</span>"));
  CHECK_THAT(html, Contains("class=\"verdict verdict-depends\"><span class=\"badge\">Verdict: depends.</span>"));
  CHECK_THAT(html, Contains("class=\"verdict verdict-not-measured\"><span class=\"badge\">Verdict: not measured.</span>"));
  for (const char* rule : {".verdict-supported {", ".verdict-not-supported {", ".verdict-depends {", ".verdict-not-measured {"})
    CHECK_THAT(html, Contains(rule));
}

TEST_CASE("Document::html is one self-contained page with its charts inline", "[study]") {
  const std::string html = sample().html();
  CHECK(html.rfind("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">", 0) == 0);
  CHECK_THAT(html, Contains("<style>"));
  // The chart is drawn inline, scalable (a viewBox), its title escaped; report.md only links it.
  const std::string svg = small_chart().svg();
  CHECK_THAT(html, Contains("<figure class=\"chart\">\n<svg viewBox=\"0 0 720 420\" " + svg.substr(5) + "</figure>"));
  CHECK_THAT(html, Contains("Loss &lt;by&gt; step"));
  CHECK_THAT(sample().markdown(), !Contains("<svg"));
  // Nothing to fetch: the only URL is the SVG namespace, which names and loads nothing.
  CHECK(count(html, "http") == 1);
  CHECK(count(html, "xmlns=\"http://www.w3.org/2000/svg\"") == 1);
  for (const char* fetch : {"src=", "<link", "url(", "@import", "<img"}) CHECK_THAT(html, !Contains(fetch));
  // The render check of render_html.sh is there, and writes where the test reads.
  CHECK_THAT(html, Contains("document.body.dataset.charts ="));
  CHECK_THAT(html, Contains("document.body.dataset.chartsDrawn ="));
}

TEST_CASE("LineChart draws a log x axis, error bars and markers only when asked", "[study]") {
  LineChart plain = small_chart();
  const std::string before = plain.svg();
  CHECK(count(before, "<circle") == 0);
  CHECK(count(before, "<path") == 0);

  LineChart c{"LR sweep", "learning rate", "loss"};
  c.log_x = true;
  c.series.push_back({"pre", {0, 1e-4, 3e-4, 1e-3, 3e-3}, {9, 2.5, 2.1, 1.9, 2.0}});  // x = 0 left out
  c.series[0].markers = true;
  c.series[0].y_low = {9, 2.4, 2.0, NAN, 1.9};  // no lower end at 1e-3
  c.series[0].y_high = {9, 2.6, 2.2, 2.0, 2.1};
  const std::string svg = c.svg();
  for (const char* tick : {">0.0001<", ">0.0002<", ">0.0005<", ">0.001<", ">0.002<"}) CHECK_THAT(svg, Contains(tick));
  CHECK(count(svg, "<circle") == 4 + 1);  // a marker per drawn point, one in the legend
  CHECK(count(svg, "<path") == 4);        // an error bar per drawn point
  CHECK(count(svg, "h8") == 4 + 3);       // its caps: both ends, but one lower end is missing
  CHECK_THAT(svg, !Contains(">9<"));      // the point at x = 0 sets no range

  // Dashed series get hollow markers.
  c.series[0].dashed = true;
  CHECK_THAT(c.svg(), Contains("r=\"3\" fill=\"white\" stroke=\"#0072B2\""));

  // Error bars of another length than y are refused, naming the series.
  c.series[0].y_high = {1, 2};
  CHECK_THROWS_WITH(c.svg(), Contains("'pre' has 2 error-bar values for 5 y values"));
}

TEST_CASE("LineChart draws a faint series light, its legend line too, and nothing else differently", "[study]") {
  LineChart c = small_chart();
  const std::string before = c.svg();
  CHECK(count(before, "opacity") == 0);
  c.series[0].faint = true;
  const std::string svg = c.svg();
  CHECK(count(svg, "stroke-opacity=\"0.35\"") == 2);  // the curve and its legend line
  const std::string light = " stroke-opacity=\"0.35\"";
  std::string unfaint = svg;
  for (std::size_t at; (at = unfaint.find(light)) != std::string::npos;) unfaint.erase(at, light.size());
  CHECK(unfaint == before);
}

TEST_CASE("LineChart's log x axis ticks powers of ten over wide ranges", "[study]") {
  LineChart c{"wide", "x", "y"};
  c.log_x = true;
  c.series.push_back({"s", {1e-3, 1e3}, {1, 2}});
  const std::string svg = c.svg();
  for (const char* tick : {">0.001<", ">0.01<", ">0.1<", ">1<", ">10<", ">100<", ">1000<"}) CHECK_THAT(svg, Contains(tick));
  CHECK_THAT(svg, !Contains(">0.002<"));
  CHECK_THAT(svg, !Contains(">500<"));
}

TEST_CASE("Document gives each heading GitHub's anchor as its id, for links in both reports", "[study]") {
  // The anchors GitHub gives these headings in a rendered report.md (github-slugger): punctuation
  // and symbols dropped, each space a '-', letters kept, a repeat numbered from -1, the title counted.
  std::set<std::string> taken;
  CHECK(study::heading_id("Claim 6: Pre-LN needs a 20–30% higher learning rate than Post-LN", taken) ==
        "claim-6-pre-ln-needs-a-2030-higher-learning-rate-than-post-ln");
  CHECK(study::heading_id("Claim 8: 1/√2 per residual connection avoids variance explosion", taken) ==
        "claim-8-12-per-residual-connection-avoids-variance-explosion");
  CHECK(study::heading_id("Claim 10: the LayerNorm ε depends on FP16 or BF16", taken) == "claim-10-the-layernorm-ε-depends-on-fp16-or-bf16");
  CHECK(study::heading_id("‖∇ block 1‖ / ‖∇ block L‖ — Ω", taken) == "-block-1---block-l--ω");
  CHECK(study::heading_id("snake_case `code` **bold**", taken) == "snake_case-code-bold");
  CHECK(study::heading_id("Setup", taken) == "setup");
  CHECK(study::heading_id("Setup", taken) == "setup-1");
  CHECK(study::heading_id("Setup", taken) == "setup-2");

  Document doc("Setup");  // the title takes "setup" first, as on GitHub
  const std::string id = doc.heading("Setup");
  CHECK(id == "setup-1");
  const std::string claim = doc.heading("Claim 3: Post-LN's first layer loses its gradient beyond 12 layers");
  CHECK(claim == "claim-3-post-lns-first-layer-loses-its-gradient-beyond-12-layers");
  study::Table t({"claim", "verdict"});
  t.add({"3", "[supported](#" + claim + ")"});
  doc.table(t);
  doc.paragraph("see [the setup](#setup-1), not [a lone bracket");
  // report.md keeps the link as Markdown, for GitHub's anchor; report.html links to the heading's id.
  CHECK_THAT(doc.markdown(), Contains("| 3 | [supported](#" + claim + ") |"));
  const std::string html = doc.html();
  CHECK_THAT(html, Contains("<h2 id=\"" + claim + "\">"));
  CHECK_THAT(html, Contains("<td><a href=\"#" + claim + "\">supported</a></td>"));
  CHECK_THAT(html, Contains("<p>see <a href=\"#setup-1\">the setup</a>, not [a lone bracket</p>"));
}

TEST_CASE("Document writes a chart's caption under it in both reports", "[study]") {
  Document doc("T");
  LineChart c = small_chart();
  c.caption = "Where a line ends, that placement stops *training*";
  doc.chart(c, "loss.svg");
  doc.chart(small_chart(), "bare.svg");  // no caption: nothing under it
  CHECK_THAT(doc.markdown(), Contains("![Loss <by> step](loss.svg)\n\n_Where a line ends, that placement stops *training*_\n\n"
                                      "![Loss <by> step](bare.svg)\n"));
  const std::string html = doc.html();
  CHECK_THAT(html, Contains("</svg>\n<figcaption>Where a line ends, that placement stops <em>training</em></figcaption>\n</figure>"));
  CHECK(count(html, "<figcaption>") == 1);
  CHECK_THAT(c.svg(), !Contains("Where a line ends"));  // the SVG file stays the chart alone
}

namespace {
// The markers of each series of an SVG chart: its name -> (shape, x, y) of every marker on the plot.
struct Marker {
  std::string shape;
  double x, y;
};
std::vector<std::pair<std::string, std::vector<Marker>>> markers_by_series(const std::string& svg) {
  std::vector<std::pair<std::string, std::vector<Marker>>> out;
  const std::regex group("<g class=\"series\" data-name=\"([^\"]*)\">([\\s\\S]*?)</g>");
  const std::regex marker("class=\"marker ([a-z-]+)\" transform=\"translate\\(([-0-9.e]+),([-0-9.e]+)\\)\"");
  for (std::sregex_iterator g(svg.begin(), svg.end(), group), end; g != end; ++g) {
    auto& [name, found] = out.emplace_back((*g)[1].str(), std::vector<Marker>{});
    const std::string body = (*g)[2].str();
    for (std::sregex_iterator m(body.begin(), body.end(), marker); m != end; ++m)
      found.push_back({(*m)[1].str(), std::stod((*m)[2].str()), std::stod((*m)[3].str())});
  }
  return out;
}
}  // namespace

TEST_CASE("LineChart tells coinciding series apart: a shape each, moved sideways where they meet", "[study]") {
  LineChart c{"Deepest trainable depth", "lr", "depth"};
  c.log_x = true;
  for (const char* name : {"Post-LN", "B2T", "DeepNorm"}) {
    c.series.push_back({name, {1e-3, 3e-3}, {12, 6}});  // the same values, three times
    c.series.back().markers = true;
  }
  c.series.push_back({"Pre-LN", {1e-3, 3e-3}, {24, 24}});  // elsewhere: not moved
  c.series.back().markers = true;
  const auto groups = markers_by_series(c.svg());
  REQUIRE(groups.size() == 4);
  std::set<std::string> shapes;
  std::set<double> xs_at_first_lr;
  for (std::size_t k = 0; k < 3; ++k) {
    const auto& [name, m] = groups[k];
    REQUIRE(m.size() == 2);  // a marker at each point
    CHECK(m[0].shape == m[1].shape);
    shapes.insert(m[0].shape);
    xs_at_first_lr.insert(m[0].x);
    CHECK(m[0].y == groups[0].second[0].y);  // moved sideways only
  }
  CHECK(shapes.size() == 3);          // three distinguishable marker sets ...
  CHECK(xs_at_first_lr.size() == 3);  // ... at three x positions
  const double spread = *xs_at_first_lr.rbegin() - *xs_at_first_lr.begin();
  CHECK(spread == Approx(14));        // 7 px apart, centred on the true x
  CHECK(groups[1].second[0].x == Approx(groups[3].second[0].x));  // the middle one and Pre-LN sit at the true x
  CHECK(groups[3].second[0].shape == "diamond");
  // The legend shows each series' shape too.
  CHECK(count(c.svg(), "class=\"legend-marker square\"") == 1);
}

TEST_CASE("LineChart draws explicit y ticks: a categorical axis with a row at zero", "[study]") {
  LineChart c{"Deepest trainable depth", "lr", "depth"};
  c.y_ticks = {{0, "none"}, {1, "3"}, {2, "6"}, {3, "12"}};
  c.series.push_back({"No residual", {1e-3}, {0}});
  c.series.back().markers = true;
  const std::string svg = c.svg();
  for (const char* label : {">none<", ">3<", ">6<", ">12<"}) CHECK_THAT(svg, Contains(label));
  const auto groups = markers_by_series(svg);
  REQUIRE(groups.size() == 1);
  REQUIRE(groups[0].second.size() == 1);
  // The marker sits on the "none" row: its y is the tick label's, 4 px above the label's baseline.
  const std::smatch none = [&] {
    std::smatch m;
    std::regex_search(svg, m, std::regex("y=\"([-0-9.e]+)\" text-anchor=\"end\">none<"));
    return m;
  }();
  REQUIRE(none.size() == 2);
  CHECK(groups[0].second[0].y + 4 == Approx(std::stod(none[1].str())));
}
