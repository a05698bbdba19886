// document.cpp — Document of document.hpp: the blocks as they come, rendered to Markdown and to
// one self-contained HTML page (inline CSS and SVG, a table of contents, escaped text).
#include "document.hpp"

#include <algorithm>
#include <cctype>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string_view>

namespace study {

namespace {

// Where the *italic* opened at s[begin - 1] closes: the next single '*' (not half of a **)
// after a character other than a space; npos when none does.
std::size_t italic_end(std::string_view s, std::size_t begin) {
  for (std::size_t j = s.find('*', begin + 1); j != std::string_view::npos; j = s.find('*', j + 1)) {
    if (j + 1 < s.size() && s[j + 1] == '*') ++j;  // skip both stars of a **
    else if (s[j - 1] != ' ') return j;
  }
  return std::string_view::npos;
}

// The inline Markdown of the texts as HTML: `code` (verbatim), **bold** and *italic* (which may
// hold the others); all else is escaped text. A mark that never closes stays text, as in Markdown,
// and so does a '*' before a space ("a * b").
std::string inline_html(std::string_view s) {
  constexpr auto npos = std::string_view::npos;
  std::string out;
  for (std::size_t i = 0; i < s.size();) {
    if (s[i] == '`') {
      if (const std::size_t end = s.find('`', i + 1); end != npos) {
        out += "<code>" + xml_escape(s.substr(i + 1, end - i - 1)) + "</code>";
        i = end + 1;
        continue;
      }
    } else if (s.substr(i, 2) == "**") {
      if (const std::size_t end = s.find("**", i + 2); end != npos && end > i + 2) {
        out += "<strong>" + inline_html(s.substr(i + 2, end - i - 2)) + "</strong>";
        i = end + 2;
      } else {
        out += "**", i += 2;
      }
      continue;
    } else if (s[i] == '*' && i + 1 < s.size() && s[i + 1] != ' ') {
      if (const std::size_t end = italic_end(s, i + 1); end != npos) {
        out += "<em>" + inline_html(s.substr(i + 1, end - i - 1)) + "</em>";
        i = end + 1;
        continue;
      }
    }
    out += xml_escape(s.substr(i, 1));
    ++i;
  }
  return out;
}

// A heading's id: lower-case ASCII letters and digits, every other run of characters (spaces,
// punctuation, the bytes of ‖∇) one '-'. Repeated headings get -2, -3, ... (taken: the ids so far).
std::string slug(const std::string& text, std::set<std::string>& taken) {
  std::string s;
  for (unsigned char c : text) {
    if (c < 128 && std::isalnum(c)) s += static_cast<char>(std::tolower(c));
    else if (!s.empty() && s.back() != '-') s += '-';
  }
  while (!s.empty() && s.back() == '-') s.pop_back();
  if (s.empty()) s = "section";
  std::string id = s;
  for (int n = 2; taken.count(id); ++n) id = s + "-" + std::to_string(n);
  taken.insert(id);
  return id;
}

// "not supported" -> "not-supported", the badge's CSS class.
std::string verdict_class(Verdict v) {
  std::string name = verdict_name(v);
  for (char& c : name)
    if (c == ' ') c = '-';
  return "verdict-" + name;
}

// A Markdown code fence longer than any run of backticks in the text, so the text cannot end it.
std::string fence(const std::string& text) {
  std::size_t longest = 0, run = 0;
  for (char c : text) {
    run = c == '`' ? run + 1 : 0;
    longest = std::max(longest, run);
  }
  return std::string(std::max<std::size_t>(3, longest + 1), '`');
}

// The inline SVG with a viewBox, so that CSS can shrink it to a narrow window (svg() writes none:
// the .svg files stay as they were, drawn at their size).
std::string scalable_svg(const LineChart& c) {
  std::string svg = c.svg();
  const std::string open = "<svg ";
  if (svg.compare(0, open.size(), open) == 0)
    svg.insert(open.size(), "viewBox=\"0 0 " + std::to_string(c.width) + " " + std::to_string(c.height) + "\" ");
  return svg;
}

// The page's style: system fonts only (nothing to download), a readable measure, bordered
// zebra tables, and one colour per verdict (--c), the badge's and its bar's.
constexpr const char* kStyle = R"(
:root { color-scheme: light; }
body { margin: 0; background: #fff; color: #1f2328;
       font: 16px/1.6 system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif; }
main { max-width: 1000px; margin: 0 auto; padding: 16px 24px 64px; }
h1 { font-size: 2em; margin: 0.5em 0; padding-bottom: 0.3em; border-bottom: 1px solid #d0d7de; }
h2 { font-size: 1.5em; margin-top: 2em; padding-bottom: 0.2em; border-bottom: 1px solid #d0d7de; }
h3 { font-size: 1.2em; margin-top: 1.5em; }
a { color: #0969da; }
code, pre { font-family: ui-monospace, "SFMono-Regular", Menlo, Consolas, "Liberation Mono", monospace; font-size: 0.9em; }
code { background: #eff1f3; padding: 0.1em 0.3em; border-radius: 4px; }
pre { background: #f6f8fa; border: 1px solid #d0d7de; border-radius: 6px; padding: 12px 16px; overflow-x: auto; line-height: 1.45; }
pre code { background: none; padding: 0; font-size: 1em; }
nav.toc { background: #f6f8fa; border: 1px solid #d0d7de; border-radius: 6px; padding: 4px 20px; margin: 1em 0 2em; }
nav.toc p { font-weight: 600; margin: 0.5em 0 0; }
nav.toc ol { margin: 0.3em 0 0.6em; padding-left: 1.5em; }
figure.table { margin: 1.2em 0; }
figure.table figcaption { font-style: italic; color: #57606a; margin-bottom: 0.4em; }
.scroll { overflow-x: auto; }
table { border-collapse: collapse; font-size: 0.92em; }
th, td { border: 1px solid #d0d7de; padding: 4px 10px; text-align: left; vertical-align: top; }
th { background: #eaeef2; }
tbody tr:nth-child(even) { background: #f6f8fa; }
figure.chart { margin: 1.2em 0; }
figure.chart svg { display: block; max-width: 100%; height: auto; }
.verdict { border-left: 5px solid var(--c); background: #f6f8fa; padding: 8px 14px; border-radius: 0 6px 6px 0; }
.verdict .badge { background: var(--c); color: #fff; font-weight: 600; padding: 0.1em 0.5em; border-radius: 4px;
                  margin-right: 0.3em; white-space: nowrap; }
.verdict-supported { --c: #1a7f37; }
.verdict-not-supported { --c: #cf222e; }
.verdict-depends { --c: #9a6700; }
.verdict-not-measured { --c: #6e7781; }
)";

// For tests/examples/render_html.sh only; the page reads the same without it. It counts the
// charts and those the browser drew (an SVG laid out at a size, whose content has a size) into
// <body data-charts data-charts-drawn>, which the test reads from the DOM after load.
constexpr const char* kRenderCheck = R"(
(function () {
  var charts = document.querySelectorAll("figure.chart"), drawn = 0;
  charts.forEach(function (figure) {
    var svg = figure.querySelector("svg");
    if (!svg) return;
    var box = svg.getBBox(), rect = svg.getBoundingClientRect();
    if (box.width > 0 && box.height > 0 && rect.width > 0 && rect.height > 0) drawn++;
  });
  document.body.dataset.charts = charts.length;
  document.body.dataset.chartsDrawn = drawn;
})();
)";

}  // namespace

std::string verdict_name(Verdict v) {
  switch (v) {
    case Verdict::supported: return "supported";
    case Verdict::not_supported: return "not supported";
    case Verdict::depends: return "depends";
    case Verdict::not_measured: return "not measured";
  }
  return "not measured";  // (every enumerator returns above; this quiets -Wreturn-type)
}

Document::Document(std::string title) : title_(std::move(title)) {}

Document::Block& Document::add(Block::Kind kind) {
  Block& b = blocks_.emplace_back();
  b.kind = kind;
  return b;
}

void Document::heading(const std::string& text, int level) {
  // Level 1 is the title's; Markdown and HTML stop at 6.
  if (level < 2 || level > 6)
    throw std::invalid_argument("Document::heading: level " + std::to_string(level) + " (2 to 6; 1 is the title)");
  Block& b = add(Block::Kind::heading);
  b.level = level, b.text = text;
}

void Document::paragraph(const std::string& text) {
  Block& b = add(Block::Kind::paragraph);
  b.text = text;
}

void Document::bullets(const std::vector<std::string>& items) {
  Block& b = add(Block::Kind::bullets);
  b.items = items;
}

void Document::table(const Table& t, const std::string& caption) {
  Block& b = add(Block::Kind::table);
  b.table = t, b.text = caption;
}

void Document::chart(const LineChart& c, const std::string& svg_file) {
  Block& b = add(Block::Kind::chart);
  b.chart = c, b.file = svg_file;
}

void Document::code(const std::string& text) {
  Block& b = add(Block::Kind::code);
  b.text = text;
}

void Document::verdict(Verdict v, const std::string& text) {
  Block& b = add(Block::Kind::verdict);
  b.verdict = v, b.text = text;
}

std::string Document::markdown() const {
  std::ostringstream o;
  o << "# " << title_ << "\n";
  for (const Block& b : blocks_) {
    o << '\n';  // a blank line between blocks
    switch (b.kind) {
      case Block::Kind::heading: o << std::string(static_cast<std::size_t>(b.level), '#') << ' ' << b.text << '\n'; break;
      case Block::Kind::paragraph: o << b.text << '\n'; break;
      case Block::Kind::bullets:
        for (const auto& item : b.items) o << "- " << item << '\n';
        break;
      case Block::Kind::table:
        if (!b.text.empty()) {
          // In italics; by underscores when the caption has a *italic* of its own (which
          // would end a *...* early).
          const char mark = b.text.find('*') == std::string::npos ? '*' : '_';
          o << mark << b.text << mark << "\n\n";
        }
        o << b.table.markdown();
        break;
      case Block::Kind::chart: {
        std::string alt;  // a ']' would end the alt text early
        for (char c : b.chart.title) alt += c == ']' || c == '[' ? std::string("\\") + c : std::string(1, c);
        o << "![" << alt << "](" << b.file << ")\n";
        break;
      }
      case Block::Kind::code: {
        const std::string f = fence(b.text);
        o << f << '\n' << b.text << (b.text.empty() || b.text.back() != '\n' ? "\n" : "") << f << '\n';
        break;
      }
      case Block::Kind::verdict: o << "**Verdict: " << verdict_name(b.verdict) << ".** " << b.text << '\n'; break;
    }
  }
  return o.str();
}

std::string Document::html() const {
  // Every heading gets an id; the level 2 ones are listed in the table of contents.
  std::set<std::string> taken;
  std::vector<std::string> ids(blocks_.size());
  std::ostringstream toc;
  for (std::size_t i = 0; i < blocks_.size(); ++i) {
    if (blocks_[i].kind != Block::Kind::heading) continue;
    ids[i] = slug(blocks_[i].text, taken);
    if (blocks_[i].level == 2) toc << "<li><a href=\"#" << ids[i] << "\">" << inline_html(blocks_[i].text) << "</a></li>\n";
  }

  std::ostringstream o;
  o << "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
    << "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
    << "<title>" << xml_escape(title_) << "</title>\n<style>" << kStyle << "</style>\n</head>\n<body>\n<main>\n"
    << "<h1>" << xml_escape(title_) << "</h1>\n";
  if (!toc.str().empty()) o << "<nav class=\"toc\" aria-label=\"Contents\">\n<p>Contents</p>\n<ol>\n" << toc.str() << "</ol>\n</nav>\n";
  for (std::size_t i = 0; i < blocks_.size(); ++i) {
    const Block& b = blocks_[i];
    switch (b.kind) {
      case Block::Kind::heading:
        o << "<h" << b.level << " id=\"" << ids[i] << "\">" << inline_html(b.text) << "</h" << b.level << ">\n";
        break;
      case Block::Kind::paragraph: o << "<p>" << inline_html(b.text) << "</p>\n"; break;
      case Block::Kind::bullets:
        o << "<ul>\n";
        for (const auto& item : b.items) o << "<li>" << inline_html(item) << "</li>\n";
        o << "</ul>\n";
        break;
      case Block::Kind::table: {
        // A figure whose caption may be wider than the table (a <caption> wraps at its width);
        // the table scrolls on its own rather than widening the page.
        o << "<figure class=\"table\">\n";
        if (!b.text.empty()) o << "<figcaption>" << inline_html(b.text) << "</figcaption>\n";
        o << "<div class=\"scroll\"><table>\n";
        o << "<thead><tr>";
        for (const auto& c : b.table.columns()) o << "<th>" << inline_html(c) << "</th>";
        o << "</tr></thead>\n<tbody>\n";
        for (const auto& row : b.table.rows()) {
          o << "<tr>";
          for (const auto& cell : row) o << "<td>" << inline_html(cell) << "</td>";
          o << "</tr>\n";
        }
        o << "</tbody>\n</table></div>\n</figure>\n";
        break;
      }
      case Block::Kind::chart: o << "<figure class=\"chart\">\n" << scalable_svg(b.chart) << "</figure>\n"; break;
      case Block::Kind::code: o << "<pre><code>" << xml_escape(b.text) << "</code></pre>\n"; break;
      case Block::Kind::verdict:
        o << "<p class=\"verdict " << verdict_class(b.verdict) << "\"><span class=\"badge\">Verdict: "
          << verdict_name(b.verdict) << ".</span> " << inline_html(b.text) << "</p>\n";
        break;
    }
  }
  o << "</main>\n<script>" << kRenderCheck << "</script>\n</body>\n</html>\n";
  return o.str();
}

}  // namespace study
