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
// **bold** and *italic*; everything else is text (HTML-escaped in report.html). report.html
// renders headings and table cells the same way, as GitHub does in report.md.
#pragma once

#include <string>
#include <vector>

#include "report.hpp"

namespace study {

// What a measurement says about a claim. Never a verdict the run did not measure: what it
// did not measure is not_measured, with the reason in the text.
enum class Verdict { supported, not_supported, depends, not_measured };
// "supported", "not supported", "depends", "not measured"
std::string verdict_name(Verdict v);

class Document {
 public:
  explicit Document(std::string title);

  // A section heading; level 2 headings make report.html's table of contents.
  void heading(const std::string& text, int level = 2);
  void paragraph(const std::string& text);
  void bullets(const std::vector<std::string>& items);
  // A table, with an optional caption above it.
  void table(const Table& t, const std::string& caption = "");
  // A chart: report.md shows the SVG file svg_file (relative to the report; the caller writes
  // it), report.html draws the chart inline.
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
    std::string text, file;
    std::vector<std::string> items;
    Table table{{}};
    LineChart chart{"", "", ""};
    Verdict verdict = Verdict::not_measured;
  };
  // A new block of this kind at the end, for the caller to fill in.
  Block& add(Block::Kind kind);

  std::string title_;
  std::vector<Block> blocks_;
};

}  // namespace study
