// trace_page.cpp — the layout of the traced graph, as SVG, and the script that steps through it.
#include "trace_page.hpp"

#include <algorithm>
#include <cmath>
#include <sstream>
#include <utility>
#include <vector>

#include "report.hpp"

namespace study {

using namespace tapegrad;

namespace {

constexpr int kColumn = 170, kRow = 64, kBoxW = 126, kBoxH = 44, kMargin = 16;

struct Place {
  int column = 0, row = 0;
  double x() const { return kMargin + column * kColumn; }
  double y() const { return kMargin + row * kRow; }
};

// Each node's and leaf's place: its column is its longest path to an output (rank 0), counted
// back from the right; in a column, the elements keep the order in which the trace numbered them.
struct Layout {
  std::vector<Place> nodes, leaves;
  int columns = 1, rows = 1;

  explicit Layout(const BackwardTrace& trace) : nodes(trace.nodes().size()), leaves(trace.leaves().size()) {
    std::vector<int> node_rank(nodes.size(), 0), leaf_rank(leaves.size(), 0);
    // nodes() lists an input before its user: walked from the back, a user's rank is final
    // before it is passed on to its inputs
    for (std::size_t i = nodes.size(); i-- > 0;)
      for (const TraceInput& in : trace.nodes()[i].inputs) {
        if (in.node >= 0) node_rank[in.node] = std::max(node_rank[in.node], node_rank[i] + 1);
        if (in.leaf >= 0) leaf_rank[in.leaf] = std::max(leaf_rank[in.leaf], node_rank[i] + 1);
      }
    int deepest = 0;
    for (int r : node_rank) deepest = std::max(deepest, r);
    for (int r : leaf_rank) deepest = std::max(deepest, r);
    columns = deepest + 1;
    std::vector<int> filled(static_cast<std::size_t>(columns), 0);
    auto place = [&](Place& p, int rank) {
      p.column = deepest - rank;
      p.row = filled[static_cast<std::size_t>(p.column)]++;
      rows = std::max(rows, p.row + 1);
    };
    for (std::size_t l = 0; l < leaves.size(); ++l) place(leaves[l], leaf_rank[l]);
    for (std::size_t n = 0; n < nodes.size(); ++n) place(nodes[n], node_rank[n]);
  }
};

std::string num(double v) { return std::isnan(v) ? "-" : fmt(v); }

// A JavaScript string literal of text (in a <script>, so "</" is broken up as well).
std::string js_string(const std::string& text) {
  std::string out = "\"";
  for (char c : text) {
    if (c == '"' || c == '\\') out += '\\', out += c;
    else if (c == '\n') out += "\\n";
    else if (c == '<') out += "\\x3c";
    else out += c;
  }
  return out + "\"";
}

const char* const kStyle = R"(
body { font: 15px/1.45 system-ui, sans-serif; margin: 1.5em; color: #222; }
svg { border: 1px solid #ddd; background: #fcfcfc; }
.box rect { fill: #fff; stroke: #777; stroke-width: 1.2; }
.leaf rect { fill: #eef4ff; stroke: #4a6fa5; }
.done rect { fill: #e6e6e6; stroke: #aaa; }
.current rect { fill: #ffe08a; stroke: #c48a00; stroke-width: 3; }
.box text { font: 12px ui-monospace, monospace; text-anchor: middle; }
line { stroke: #999; stroke-width: 1.2; marker-end: url(#arrow); }
.grad { font: 11px ui-monospace, monospace; fill: #b03000; text-anchor: middle; }
#controls { margin: 0.8em 0; display: flex; gap: 0.6em; align-items: center; }
#what { font: 14px ui-monospace, monospace; white-space: pre; background: #f5f5f5; padding: 0.6em; }
)";

// go(k) shows step k (0: before the pass): the element of step k is current, those of steps
// 1..k-1 done, and every edge into a visited node carries the norm that node sent down it.
const char* const kScript = R"(
const el = (id) => document.getElementById(id);
let k = 0;
function go(s) {
  k = Math.max(0, Math.min(steps.length, s));
  for (const e of document.querySelectorAll('.current, .done')) e.classList.remove('current', 'done');
  for (const t of document.querySelectorAll('.grad')) t.textContent = '';
  for (let i = 0; i < k; ++i) {
    el(steps[i].id).classList.add(i === k - 1 ? 'current' : 'done');
    for (const [edge, norm] of steps[i].out) el(edge).textContent = norm;
  }
  document.body.dataset.step = k;
  document.body.dataset.current = k ? steps[k - 1].id : '';
  el('slider').value = k;
  el('what').textContent = k ? steps[k - 1].text : before;
}
el('prev').onclick = () => go(k - 1);
el('next').onclick = () => go(k + 1);
el('slider').oninput = (e) => go(Number(e.target.value));
document.addEventListener('keydown', (e) => {
  if (e.key === 'ArrowRight') go(k + 1);
  if (e.key === 'ArrowLeft') go(k - 1);
});
// #step=K opens the page at step K; #next=K presses Next K times (the Chromium test's way of
// stepping through it as a reader does)
const asked = /step=(\d+)/.exec(location.hash), presses = /next=(\d+)/.exec(location.hash);
go(asked ? Number(asked[1]) : 0);
for (let i = 0; presses && i < Number(presses[1]); ++i) el('next').click();
)";

}  // namespace

std::string trace_page(const BackwardTrace& trace, const std::string& title) {
  const Layout layout(trace);
  const auto& nodes = trace.nodes();
  const auto& leaves = trace.leaves();
  const int width = 2 * kMargin + (layout.columns - 1) * kColumn + kBoxW;
  const int height = 2 * kMargin + (layout.rows - 1) * kRow + kBoxH;
  std::ostringstream o;
  o << "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>" << xml_escape(title)
    << "</title>\n<style>" << kStyle << "</style>\n</head>\n<body>\n<h1>" << xml_escape(title) << "</h1>\n"
    << "<p>The forward pass runs left to right, from the leaves to the output. The backward pass visits the "
       "nodes from the output back: at each step the engine hands a node dL/d(output), the sum of what its "
       "users sent it, and the node's backward turns it into one gradient per input. The number on an edge is "
       "the norm of the gradient sent back down it; a leaf's step adds a gradient into its <code>.grad</code>.</p>\n"
    << "<div id=\"controls\"><button id=\"prev\">&larr; Back</button><button id=\"next\">Next &rarr;</button>"
    << "<input id=\"slider\" type=\"range\" min=\"0\" max=\"" << trace.steps().size() << "\" value=\"0\">"
    << "<span>" << trace.steps().size() << " steps (arrow keys step too)</span></div>\n"
    << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << width << "\" height=\"" << height << "\" viewBox=\"0 0 "
    << width << ' ' << height << "\">\n"
    << "<defs><marker id=\"arrow\" viewBox=\"0 0 10 10\" refX=\"10\" refY=\"5\" markerWidth=\"7\" markerHeight=\"7\" "
       "orient=\"auto\"><path d=\"M0,0 L10,5 L0,10 z\" fill=\"#999\"/></marker></defs>\n";
  // edges, in the direction of the forward pass: from an input's right side to its user's left
  for (std::size_t n = 0; n < nodes.size(); ++n)
    for (std::size_t i = 0; i < nodes[n].inputs.size(); ++i) {
      const TraceInput& in = nodes[n].inputs[i];
      if (in.node < 0 && in.leaf < 0) continue;  // a constant: named in the node's box
      const Place& from = in.node >= 0 ? layout.nodes[static_cast<std::size_t>(in.node)]
                                       : layout.leaves[static_cast<std::size_t>(in.leaf)];
      const Place& to = layout.nodes[n];
      const double x1 = from.x() + kBoxW, y1 = from.y() + kBoxH / 2.0, x2 = to.x(), y2 = to.y() + kBoxH / 2.0;
      o << "<line x1=\"" << x1 << "\" y1=\"" << y1 << "\" x2=\"" << x2 << "\" y2=\"" << y2 << "\"/>"
        << "<text class=\"grad\" id=\"g" << n << '_' << i << "\" x=\"" << (x1 + x2) / 2 << "\" y=\""
        << (y1 + y2) / 2 - 4 << "\"></text>\n";
    }
  auto box = [&](const std::string& id, const char* kind, const Place& p, const std::string& top,
                 const std::string& bottom) {
    o << "<g class=\"box " << kind << "\" id=\"" << id << "\"><rect x=\"" << p.x() << "\" y=\"" << p.y()
      << "\" width=\"" << kBoxW << "\" height=\"" << kBoxH << "\" rx=\"6\"/><text x=\"" << p.x() + kBoxW / 2.0
      << "\" y=\"" << p.y() + 18 << "\">" << xml_escape(top) << "</text><text x=\"" << p.x() + kBoxW / 2.0 << "\" y=\""
      << p.y() + 35 << "\">" << xml_escape(bottom) << "</text></g>\n";
  };
  for (std::size_t l = 0; l < leaves.size(); ++l)
    box("l" + std::to_string(l), "leaf", layout.leaves[l], leaves[l].name, shape_str(leaves[l].shape));
  for (std::size_t n = 0; n < nodes.size(); ++n) {
    std::size_t constants = 0;
    for (const TraceInput& in : nodes[n].inputs) constants += in.node < 0 && in.leaf < 0;
    box("n" + std::to_string(n), "node", layout.nodes[n], "#" + std::to_string(n + 1) + " " + nodes[n].op,
        shape_str(nodes[n].output_shape) + (constants ? " +" + std::to_string(constants) + " const" : ""));
  }
  o << "</svg>\n<div id=\"what\"></div>\n<script>\nconst before = "
    << js_string("Before the pass: press Next (or the right arrow key) to watch the engine take each node, "
                 "output first.")
    << ";\nconst steps = [\n";
  const auto& steps = trace.steps();
  for (std::size_t s = 0; s < steps.size(); ++s) {
    const TraceStep& step = steps[s];
    const std::string id = step.leaf >= 0 ? "l" + std::to_string(step.leaf) : "n" + std::to_string(step.node);
    o << "  {id: \"" << id << "\", text: " << js_string(trace.step_text(s)) << ", out: [";
    const char* separator = "";
    if (step.node >= 0)
      for (std::size_t i = 0; i < step.grad_out.size(); ++i) {
        const TraceInput& in = nodes[static_cast<std::size_t>(step.node)].inputs[i];
        if (in.node < 0 && in.leaf < 0) continue;
        o << std::exchange(separator, ", ") << "[\"g" << step.node << '_' << i << "\", " << js_string(num(step.grad_out[i])) << "]";
      }
    o << "]},\n";
  }
  o << "];\n" << kScript << "</script>\n</body>\n</html>\n";
  return o.str();
}

}  // namespace study
