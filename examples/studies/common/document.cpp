// TEMP stub
#include "document.hpp"
namespace study {
std::string verdict_name(Verdict v) {
  switch (v) { case Verdict::supported: return "supported"; case Verdict::not_supported: return "not supported";
    case Verdict::depends: return "depends"; case Verdict::not_measured: return "not measured"; }
  return "?";
}
Document::Document(std::string title) : title_(std::move(title)) {}
void Document::heading(const std::string& text, int level) { Block b; b.kind = Block::Kind::heading; b.level = level; b.text = text; blocks_.push_back(b); }
void Document::paragraph(const std::string& text) { Block b; b.kind = Block::Kind::paragraph; b.text = text; blocks_.push_back(b); }
void Document::bullets(const std::vector<std::string>& items) { Block b; b.kind = Block::Kind::bullets; b.items = items; blocks_.push_back(b); }
void Document::table(const Table& t, const std::string& caption) { Block b; b.kind = Block::Kind::table; b.table = t; b.text = caption; blocks_.push_back(b); }
void Document::chart(const LineChart& c, const std::string& file) { Block b; b.kind = Block::Kind::chart; b.chart = c; b.file = file; blocks_.push_back(b); }
void Document::code(const std::string& text) { Block b; b.kind = Block::Kind::code; b.text = text; blocks_.push_back(b); }
void Document::verdict(Verdict v, const std::string& text) { Block b; b.kind = Block::Kind::verdict; b.verdict = v; b.text = text; blocks_.push_back(b); }
std::string Document::markdown() const {
  std::string o = "# " + title_ + "\n\n";
  for (const Block& b : blocks_) switch (b.kind) {
    case Block::Kind::heading: o += std::string(b.level, '#') + " " + b.text + "\n\n"; break;
    case Block::Kind::paragraph: o += b.text + "\n\n"; break;
    case Block::Kind::bullets: for (auto& i : b.items) o += "- " + i + "\n"; o += "\n"; break;
    case Block::Kind::table: if (!b.text.empty()) o += "*" + b.text + "*\n\n"; o += b.table.markdown() + "\n"; break;
    case Block::Kind::chart: o += "![" + b.chart.title + "](" + b.file + ")\n\n"; break;
    case Block::Kind::code: o += "```\n" + b.text + "\n```\n\n"; break;
    case Block::Kind::verdict: o += "**Verdict: " + verdict_name(b.verdict) + ".** " + b.text + "\n\n"; break;
  }
  return o;
}
std::string Document::html() const { return "<html><body><pre>" + markdown() + "</pre></body></html>"; }
}
