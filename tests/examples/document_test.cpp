// Tests of study::Document (examples/common/document.hpp), report.md and report.html, and of
// the LineChart options the reports use (log x axis, error bars, markers, faint). A program of
// its own, linked with tapegrad_report (not named test_*.cpp, so tapegrad_tests leaves it out).
// That a browser draws the page is tests/examples/render_html.sh's part.
#include <catch2/catch.hpp>

#include <cmath>
#include <stdexcept>
#include <string>

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
  CHECK_THAT(html, Contains("<h2 id=\"claim-1-post-ln-loses-its-gradient-2\">"));
  CHECK_THAT(html, Contains("<h3 id=\"details\">Details</h3>"));
  CHECK_THAT(html, Contains("<nav class=\"toc\""));
  CHECK_THAT(html, Contains("<li><a href=\"#claim-1-post-ln-loses-its-gradient\">Claim 1: Post-LN loses its gradient</a></li>\n"
                            "<li><a href=\"#claim-1-post-ln-loses-its-gradient-2\">Claim 1: Post-LN loses its gradient</a></li>\n"
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
