// document.hpp — a study's report, written once and rendered twice: report.md for terminals
// and GitHub, and report.html, one self-contained page (its CSS and its SVG charts inline, no
// network, no script from elsewhere) that a reader opens offline in any browser. train_lm's
// live report (train_lm/report_page.hpp) is such a page too.
//
//   study::Document doc("Depth study");
//   doc.heading("Claim 3: Post-LN's first layers lose their gradient beyond 12 layers");
//   doc.paragraph("The **setup**: ... `depth_study --depths 6,12` ...");
//   doc.table(t, "‖∇ block 1‖ / ‖∇ block L‖ at initialization, mean ± spread over 3 seeds");
//   doc.chart(chart, "grad_ratio.svg");      // report.md links the file; report.html inlines the SVG
//   doc.verdict(study::Verdict::supported, "at 24 layers the ratio is 0.01 ± 0.002 ...");
//   doc.code("depth_study --full");
//   io::write_file_atomic(dir + "/report.md", doc.markdown());
//   io::write_file_atomic(dir + "/report.html", doc.html());
//
// Paragraphs, bullets, captions and verdict texts take a little inline Markdown: `code`,
// **bold**, *italic* and [links](#a-heading-id); everything else is text (HTML-escaped in
// report.html). report.html renders headings and table cells the same way, as GitHub does in
// report.md.
//
// Every heading gets an id when it is added, GitHub's anchor of its text (heading_id below):
// the same "#claim-3-..." link then leads to the section in report.html and, on GitHub or in
// any viewer with GitHub's anchors, in report.md:
//   const std::string id = doc.heading("Claim 3: ...");
//   doc.paragraph("[supported](#" + id + ")");
#pragma once

#include <set>
#include <string>
#include <vector>

#include "report.hpp"

namespace study {

// What a measurement says about a claim. Never a verdict the run did not measure: what it
// did not measure is not_measured, with the reason in the text.
enum class Verdict { supported, not_supported, depends, not_measured };
// "supported", "not supported", "depends", "not measured"
std::string verdict_name(Verdict v);

// GitHub's anchor of a heading's text (github-slugger): lower case; letters, digits, '-' and '_'
// kept; each space a '-'; all else (punctuation, symbols such as ‖ ∇ √ –) dropped. Non-ASCII
// letters are kept for Latin-1, Latin Extended-A/B, Greek and Cyrillic (the scripts a report
// uses; ε stays), lower-cased for Latin-1 and Greek. taken: the ids so far; a repeated anchor
// gets -1, -2, ... as on GitHub, and is added to taken.
std::string heading_id(const std::string& text, std::set<std::string>& taken);

class Document {
 public:
  explicit Document(std::string title);

  // A section heading; level 2 headings make report.html's table of contents. Returns its id.
  std::string heading(const std::string& text, int level = 2);
  void paragraph(const std::string& text);
  void bullets(const std::vector<std::string>& items);
  // A table, with an optional caption above it.
  void table(const Table& t, const std::string& caption = "");
  // A chart: report.md shows the SVG file svg_file (relative to the report; the caller writes
  // it), report.html draws the chart inline; both write c.caption under it.
  void chart(const LineChart& c, const std::string& svg_file);
  // A command or other preformatted text.
  void code(const std::string& text);
  // "Verdict: supported. <text>", a coloured badge in report.html.
  void verdict(Verdict v, const std::string& text);

  std::string markdown() const;
  std::string html() const;

 private:
  struct Block {
    enum class Kind { heading, paragraph, bullets, table, chart, code, verdict } kind;
    int level = 0;
    std::string text, file, id;  // id: a heading's
    std::vector<std::string> items;
    Table table{{}};
    LineChart chart{"", "", ""};
    Verdict verdict = Verdict::not_measured;
  };
  // A new block of this kind at the end, for the caller to fill in.
  Block& add(Block::Kind kind);

  std::string title_;
  std::vector<Block> blocks_;
  std::set<std::string> ids_;  // the headings' ids so far, the title's first (GitHub counts it too)
};

}  // namespace study
