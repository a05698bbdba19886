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

// The inline Markdown of the texts as HTML: `code` (verbatim), **bold**, *italic* and [text](target)
// (which may hold the others); all else is escaped text. A mark that never closes stays text, as in Markdown,
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
    } else if (s[i] == '[') {
      // A link needs its "](" and its ")"; a lone '[' stays text.
      const std::size_t mid = s.find("](", i + 1), end = mid == npos ? npos : s.find(')', mid + 2);
      if (end != npos) {
        out += "<a href=\"" + xml_escape(s.substr(mid + 2, end - mid - 2)) + "\">" + inline_html(s.substr(i + 1, mid - i - 1)) + "</a>";
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

// A caption in italics; by underscores when it has a *italic* of its own (which would end a *...*
// early).
std::string italic(const std::string& text) {
  const char mark = text.find('*') == std::string::npos ? '*' : '_';
  return mark + text + mark;
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
td a { white-space: nowrap; }
figure.chart { margin: 1.2em 0; }
figure.chart svg { display: block; max-width: 100%; height: auto; }
figure.chart figcaption { color: #57606a; font-size: 0.92em; margin-top: 0.4em; max-width: 720px; }
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

std::string heading_id(const std::string& text, std::set<std::string>& taken) {
  std::string s;
  for (std::size_t i = 0; i < text.size();) {
    // One UTF-8 code point (a stray continuation byte reads as one of its own, and is dropped).
    const auto lead = static_cast<unsigned char>(text[i]);
    const std::size_t n = lead < 0x80 ? 1 : lead >= 0xF0 ? 4 : lead >= 0xE0 ? 3 : lead >= 0xC0 ? 2 : 1;
    char32_t c = n == 1 ? lead : lead & (0x7F >> n);
    for (std::size_t k = 1; k < n && i + k < text.size(); ++k) c = (c << 6) | (static_cast<unsigned char>(text[i + k]) & 0x3F);
    const std::string bytes = text.substr(i, n);
    i += n;
    if (c < 0x80) {
      if (std::isalnum(static_cast<int>(c))) s += static_cast<char>(std::tolower(static_cast<int>(c)));
      else if (c == ' ' || c == '-') s += '-';
      else if (c == '_') s += '_';
      continue;
    }
    const bool latin1 = (c >= 0xC0 && c <= 0xFF && c != 0xD7 && c != 0xF7) || c == 0xAA || c == 0xB5 || c == 0xBA;  // not × ÷
    const bool letter = latin1 || (c >= 0x100 && c <= 0x24F) || (c >= 0x386 && c <= 0x3FF && c != 0x387) || (c >= 0x400 && c <= 0x4FF);
    if (!letter) continue;
    // Lower-case the capitals of Latin-1 (À-Þ) and Greek (Α-Ω), each 0x20 below its small letter.
    if ((c >= 0xC0 && c <= 0xDE) || (c >= 0x391 && c <= 0x3A9)) {
      c += 0x20;
      s += static_cast<char>(0xC0 | (c >> 6)), s += static_cast<char>(0x80 | (c & 0x3F));
    } else {
      s += bytes;
    }
  }
  if (s.empty()) s = "section";
  std::string id = s;
  for (int n = 1; taken.count(id); ++n) id = s + "-" + std::to_string(n);
  taken.insert(id);
  return id;
}

std::string verdict_name(Verdict v) {
  switch (v) {
    case Verdict::supported: return "supported";
    case Verdict::not_supported: return "not supported";
    case Verdict::depends: return "depends";
    case Verdict::not_measured: return "not measured";
  }
  return "not measured";  // (every enumerator returns above; this quiets -Wreturn-type)
}

Document::Document(std::string title) : title_(std::move(title)) { heading_id(title_, ids_); }

Document::Block& Document::add(Block::Kind kind) {
  Block& b = blocks_.emplace_back();
  b.kind = kind;
  return b;
}

std::string Document::heading(const std::string& text, int level) {
  // Level 1 is the title's; Markdown and HTML stop at 6.
  if (level < 2 || level > 6)
    throw std::invalid_argument("Document::heading: level " + std::to_string(level) + " (2 to 6; 1 is the title)");
  Block& b = add(Block::Kind::heading);
  b.level = level, b.text = text, b.id = heading_id(text, ids_);
  return b.id;
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
        if (!b.text.empty()) o << italic(b.text) << "\n\n";
        o << b.table.markdown();
        break;
      case Block::Kind::chart: {
        std::string alt;  // a ']' would end the alt text early
        for (char c : b.chart.title) alt += c == ']' || c == '[' ? std::string("\\") + c : std::string(1, c);
        o << "![" << alt << "](" << b.file << ")\n";
        if (!b.chart.caption.empty()) o << '\n' << italic(b.chart.caption) << '\n';
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
  // The level 2 headings are listed in the table of contents, each by its id.
  std::ostringstream toc;
  for (const Block& b : blocks_)
    if (b.kind == Block::Kind::heading && b.level == 2) toc << "<li><a href=\"#" << b.id << "\">" << inline_html(b.text) << "</a></li>\n";

  std::ostringstream o;
  o << "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
    << "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
    << "<title>" << xml_escape(title_) << "</title>\n<style>" << kStyle << "</style>\n</head>\n<body>\n<main>\n"
    << "<h1>" << xml_escape(title_) << "</h1>\n";
  if (!toc.str().empty()) o << "<nav class=\"toc\" aria-label=\"Contents\">\n<p>Contents</p>\n<ol>\n" << toc.str() << "</ol>\n</nav>\n";
  for (const Block& b : blocks_) {
    switch (b.kind) {
      case Block::Kind::heading:
        o << "<h" << b.level << " id=\"" << b.id << "\">" << inline_html(b.text) << "</h" << b.level << ">\n";
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
      case Block::Kind::chart:
        o << "<figure class=\"chart\">\n" << scalable_svg(b.chart);
        if (!b.chart.caption.empty()) o << "<figcaption>" << inline_html(b.chart.caption) << "</figcaption>\n";
        o << "</figure>\n";
        break;
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
