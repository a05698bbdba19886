// report.cpp — CSV, Markdown and SVG writers of report.hpp, and its small sums.
#include "report.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iterator>
#include <limits>
#include <map>
#include <sstream>
#include <stdexcept>

#include <tapegrad/io/file.hpp>

namespace study {

std::string fmt(double v, int significant) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*g", significant, v);
  return buf;
}

std::string join(const std::vector<std::string>& items, const std::string& separator) {
  std::string out;
  for (const auto& i : items) out += (out.empty() ? "" : separator) + i;
  return out;
}

std::string xml_escape(std::string_view s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '&': out += "&amp;"; break;
      case '"': out += "&quot;"; break;
      default: out += c;
    }
  }
  return out;
}

Table::Table(std::vector<std::string> columns) : columns_(std::move(columns)) {}

void Table::add(std::vector<std::string> row) {
  if (row.size() != columns_.size())
    throw std::invalid_argument("Table::add: a row of " + std::to_string(row.size()) + " cells for " +
                                std::to_string(columns_.size()) + " columns");
  rows_.push_back(std::move(row));
}

std::string Table::markdown() const {
  std::ostringstream out;
  auto line = [&](const std::vector<std::string>& cells) {
    out << '|';
    for (const auto& c : cells) out << ' ' << c << " |";
    out << '\n';
  };
  line(columns_);
  out << '|';
  for (std::size_t i = 0; i < columns_.size(); ++i) out << "---|";
  out << '\n';
  for (const auto& r : rows_) line(r);
  return out.str();
}

namespace {
std::string csv_cell(const std::string& s) {
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string q = "\"";
  for (char c : s) q += c == '"' ? std::string("\"\"") : std::string(1, c);
  return q + "\"";
}

// "Nice" tick positions covering [lo, hi]: steps of 1, 2 or 5 times a power of ten, and at
// least min_step (1: whole numbers only).
std::vector<double> nice_ticks(double lo, double hi, double min_step = 0) {
  const double raw = (hi - lo) / 6;  // about six ticks
  const double magnitude = std::pow(10.0, std::floor(std::log10(raw)));
  double step = magnitude;
  for (double m : {1.0, 2.0, 5.0, 10.0})
    if (m * magnitude >= raw) { step = m * magnitude; break; }
  step = std::max(step, min_step);
  std::vector<double> ticks;
  for (double t = std::ceil(lo / step) * step; t <= hi + step * 1e-9; t += step) ticks.push_back(std::abs(t) < step * 1e-9 ? 0.0 : t);
  return ticks;
}

// Ticks of a log10 axis (lo, hi are exponents): the powers of ten in range, every k-th one
// when there are more than 8, so that the labels never overlap. Under two powers of ten in
// range, nice steps of the values themselves (1.8, 2, 2.2).
std::vector<double> log_ticks(double lo, double hi) {
  const double first = std::ceil(lo), last = std::floor(hi);
  if (last <= first) {
    std::vector<double> ticks;
    for (double v : nice_ticks(std::pow(10.0, lo), std::pow(10.0, hi)))
      if (v > 0) ticks.push_back(std::log10(v));
    return ticks;
  }
  const double k = std::ceil((last - first + 1) / 8);
  std::vector<double> ticks;
  for (double e = std::ceil(first / k) * k; e <= last; e += k) ticks.push_back(e);
  return ticks;
}

// Ticks of a log10 x axis (lo, hi are exponents). Over two decades or more, log_ticks' powers of
// ten; under two, 1, 2 and 5 times each power of ten as well (a sweep of 1e-4 to 3e-3 gets five
// ticks, not two), and when even those are fewer than two, log_ticks' nice steps of the values.
std::vector<double> log_x_ticks(double lo, double hi) {
  if (hi - lo >= 2) return log_ticks(lo, hi);
  std::vector<double> ticks;
  for (double e = std::floor(lo); e <= hi; ++e)
    for (double m : {1.0, 2.0, 5.0})
      if (const double t = e + std::log10(m); t >= lo - 1e-9 && t <= hi + 1e-9) ticks.push_back(t);
  return ticks.size() >= 2 ? ticks : log_ticks(lo, hi);
}

// Distinguishable colours (Okabe-Ito, safe for colour-blind readers); past 8, dotted repeats.
const char* kColors[] = {"#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000", "#F0E442"};
}  // namespace

std::string Table::csv() const {
  std::ostringstream out;
  auto line = [&](const std::vector<std::string>& cells) {
    for (std::size_t i = 0; i < cells.size(); ++i) out << (i ? "," : "") << csv_cell(cells[i]);
    out << '\n';
  };
  line(columns_);
  for (const auto& r : rows_) line(r);
  return out.str();
}

void Table::write_csv(const std::string& path) const { tapegrad::io::write_file_atomic(path, csv()); }

LineChart::LineChart(std::string title, std::string x_label, std::string y_label)
    : title(std::move(title)), x_label(std::move(x_label)), y_label(std::move(y_label)) {}

namespace {
// One marker of the given shape centred at (x, y), as an element of its own (cls: "marker" on the
// plot, "legend-marker" in the legend): placed by a translate, so its centre reads the same for
// every shape. About 7 px across, the size of the circle of radius 3 it replaces.
std::string marker_element(const std::string& shape, const std::string& cls, double x, double y, const std::string& paint) {
  std::ostringstream o;
  const std::string head = " class=\"" + cls + " " + shape + "\" transform=\"translate(";
  o << (shape == "circle" ? "<circle" : shape == "square" ? "<rect" : "<polygon") << head << x << ',' << y << ")\" ";
  if (shape == "circle") o << "r=\"3\" ";
  else if (shape == "square") o << "x=\"-3\" y=\"-3\" width=\"6\" height=\"6\" ";
  else if (shape == "triangle") o << "points=\"0,-4 3.6,2.5 -3.6,2.5\" ";
  else if (shape == "diamond") o << "points=\"0,-4.2 4.2,0 0,4.2 -4.2,0\" ";
  else if (shape == "triangle-down") o << "points=\"0,4 3.6,-2.5 -3.6,-2.5\" ";
  else o << "points=\"0,-4 3.8,-1.2 2.4,3.3 -2.4,3.3 -3.8,-1.2\" ";  // pentagon
  o << paint << "/>\n";
  return o.str();
}
}  // namespace

std::string LineChart::svg() const {
  for (const auto& s : series)
    for (const auto* bars : {&s.y_low, &s.y_high})
      if (!bars->empty() && bars->size() != s.y.size())
        throw std::invalid_argument("LineChart::svg: series '" + s.name + "' has " + std::to_string(bars->size()) +
                                    " error-bar values for " + std::to_string(s.y.size()) + " y values");
  // Plot area inside margins; the legend sits to the right of it.
  const double left = 70, right = 170, top = 36, bottom = 50;
  const double pw = width - left - right, ph = height - top - bottom;
  // Axis coordinates: log10 of the values on a log axis, the values themselves otherwise.
  auto tx = [&](double x) { return log_x ? std::log10(x) : x; };
  auto ty = [&](double y) { return log_y ? std::log10(y) : y; };
  auto usable = [&](double y) { return std::isfinite(y) && (!log_y || y > 0); };
  auto usable_x = [&](double x) { return std::isfinite(x) && (!log_x || x > 0); };
  // Whether point i of s is drawn, and whether an error-bar end of it is (bars: y_low or y_high).
  auto drawn = [&](const Series& s, std::size_t i) { return usable(s.y[i]) && usable_x(s.x[i]); };
  auto bar_end = [&](const std::vector<double>& bars, std::size_t i) { return !bars.empty() && usable(bars[i]); };

  // The dodge: the marked series drawn at each point (x, y), in order. The j-th of m series at a
  // point moves (j - (m - 1) / 2) · kDodge pixels sideways there, line, bar and marker alike.
  constexpr double kDodge = 7;
  std::map<std::pair<double, double>, std::vector<std::size_t>> at_point;
  std::size_t crowd = 1;  // the most series sharing one point
  for (std::size_t k = 0; k < series.size(); ++k)
    for (std::size_t i = 0; series[k].markers && i < std::min(series[k].x.size(), series[k].y.size()); ++i) {
      if (!drawn(series[k], i)) continue;
      auto& here = at_point[{series[k].x[i], series[k].y[i]}];
      if (here.empty() || here.back() != k) here.push_back(k);
      crowd = std::max(crowd, here.size());
    }
  auto dodge = [&](std::size_t k, const Series& s, std::size_t i) {
    if (!s.markers) return 0.0;
    const auto& here = at_point.at({s.x[i], s.y[i]});
    const auto j = static_cast<double>(std::find(here.begin(), here.end(), k) - here.begin());
    return (j - static_cast<double>(here.size() - 1) / 2) * kDodge;
  };

  double x0 = std::numeric_limits<double>::infinity(), x1 = -x0, y0 = x0, y1 = -x0;
  for (const auto& s : series)
    for (std::size_t i = 0; i < std::min(s.x.size(), s.y.size()); ++i) {
      if (!drawn(s, i)) continue;
      x0 = std::min(x0, tx(s.x[i])), x1 = std::max(x1, tx(s.x[i]));
      y0 = std::min(y0, ty(s.y[i])), y1 = std::max(y1, ty(s.y[i]));
      for (const auto* bars : {&s.y_low, &s.y_high})
        if (bar_end(*bars, i)) y0 = std::min(y0, ty((*bars)[i])), y1 = std::max(y1, ty((*bars)[i]));
    }
  const bool empty = !(x0 <= x1);
  if (empty) x0 = 0, x1 = 1, y0 = 0, y1 = 1;
  for (const auto& [value, label] : y_ticks)
    if (usable(value)) y0 = std::min(y0, ty(value)), y1 = std::max(y1, ty(value));
  if (x1 == x0) x0 -= 0.5, x1 += 0.5;
  if (y1 == y0) y0 -= 0.5, y1 += 0.5;
  // Markers and error-bar caps at the first and last x would be cut by the frame: room for them,
  // and for the widest dodge (half of it each side, plus a marker's half width).
  auto marked = [](const Series& s) { return s.markers || !s.y_low.empty() || !s.y_high.empty(); };
  if (std::any_of(series.begin(), series.end(), marked)) {
    const double room = (static_cast<double>(crowd - 1) / 2 * kDodge + 6) / pw;  // a share of the plot's width
    const double x_pad = std::max(0.03, room / (1 - 2 * room)) * (x1 - x0);
    x0 -= x_pad, x1 += x_pad;
  }
  const double pad = 0.04 * (y1 - y0);
  y0 -= pad, y1 += pad;
  auto px_axis = [&](double t) { return left + (t - x0) / (x1 - x0) * pw; };  // t in axis coordinates
  auto px = [&](double x) { return px_axis(tx(x)); };
  auto py = [&](double y) { return top + (1 - (ty(y) - y0) / (y1 - y0)) * ph; };

  std::ostringstream o;
  o << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << width << "\" height=\"" << height
    << "\" font-family=\"sans-serif\" font-size=\"12\">\n"
    << "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n"
    << "<text x=\"" << left + pw / 2 << "\" y=\"22\" text-anchor=\"middle\" font-size=\"15\">" << xml_escape(title) << "</text>\n";
  // Grid and tick labels: the explicit y ticks, or nice ones.
  std::vector<std::pair<double, std::string>> yt;
  for (const auto& [value, label] : y_ticks)
    if (usable(value)) yt.emplace_back(ty(value), label);
  if (y_ticks.empty())
    for (double t : log_y ? log_ticks(y0, y1) : nice_ticks(y0, y1)) yt.emplace_back(t, fmt(log_y ? std::pow(10.0, t) : t, 3));
  for (const auto& [t, label] : yt) {
    const double y = top + (1 - (t - y0) / (y1 - y0)) * ph;
    o << "<line x1=\"" << left << "\" x2=\"" << left + pw << "\" y1=\"" << y << "\" y2=\"" << y << "\" stroke=\"#ddd\"/>\n"
      << "<text x=\"" << left - 6 << "\" y=\"" << y + 4 << "\" text-anchor=\"end\">" << xml_escape(label) << "</text>\n";
  }
  for (double t : log_x ? log_x_ticks(x0, x1) : nice_ticks(x0, x1, integer_x ? 1 : 0)) {
    const double value = log_x ? std::pow(10.0, t) : t;
    if (log_x && integer_x && std::abs(value - std::round(value)) > 1e-9 * value) continue;
    const double x = px_axis(t);
    o << "<line x1=\"" << x << "\" x2=\"" << x << "\" y1=\"" << top << "\" y2=\"" << top + ph << "\" stroke=\"#eee\"/>\n"
      << "<text x=\"" << x << "\" y=\"" << top + ph + 16 << "\" text-anchor=\"middle\">" << fmt(value, 4) << "</text>\n";
  }
  o << "<rect x=\"" << left << "\" y=\"" << top << "\" width=\"" << pw << "\" height=\"" << ph << "\" fill=\"none\" stroke=\"#333\"/>\n"
    << "<text x=\"" << left + pw / 2 << "\" y=\"" << height - 12 << "\" text-anchor=\"middle\">" << xml_escape(x_label) << "</text>\n"
    << "<text transform=\"translate(16," << top + ph / 2 << ") rotate(-90)\" text-anchor=\"middle\">" << xml_escape(y_label) << "</text>\n";
  if (empty) o << "<text x=\"" << left + pw / 2 << "\" y=\"" << top + ph / 2 << "\" text-anchor=\"middle\">no finite values</text>\n";

  // One polyline per unbroken run of usable points; a single point gets a dot (or its marker).
  // Each series is a group named after it, so that a reader of the SVG (and a test) finds its parts.
  std::size_t solid = 0, dashed = 0;  // the k-th dashed series takes the k-th solid one's colour
  std::size_t shapes = 0;             // the k-th marked series takes the k-th shape
  for (std::size_t k = 0; k < series.size(); ++k) {
    const Series& s = series[k];
    const std::size_t n = s.dashed ? dashed++ : solid++;
    const std::string color = kColors[n % 8];
    const std::string shape = s.markers ? kMarkerShapes[shapes++ % std::size(kMarkerShapes)] : "";
    o << "<g class=\"series\" data-name=\"" << xml_escape(s.name) << "\">\n";
    // The dash pattern, and the opacity of a faint series (its legend line drawn the same way).
    const std::string stroke = std::string(s.dashed ? " stroke-dasharray=\"7,4\"" : n >= 8 ? " stroke-dasharray=\"2,3\"" : "") +
                             (s.faint ? " stroke-opacity=\"0.35\"" : "");
    std::vector<std::pair<double, double>> run;
    auto flush = [&] {
      if (run.size() == 1 && !s.markers)
        o << "<circle cx=\"" << run[0].first << "\" cy=\"" << run[0].second << "\" r=\"3\" fill=\"" << color << "\""
          << (s.faint ? " fill-opacity=\"0.35\"" : "") << "/>\n";
      if (run.size() >= 2) {
        o << "<polyline fill=\"none\" stroke=\"" << color << "\" stroke-width=\"1.8\"" << stroke << " points=\"";
        for (const auto& [x, y] : run) o << x << ',' << y << ' ';
        o << "\"/>\n";
      }
      run.clear();
    };
    for (std::size_t i = 0; i < std::min(s.x.size(), s.y.size()); ++i) {
      if (drawn(s, i)) run.emplace_back(px(s.x[i]) + dodge(k, s, i), py(s.y[i]));
      else flush();
    }
    flush();
    // Error bars, then markers on top: a vertical bar with 8 px caps, a marker about 7 px across.
    const std::string marker =  // hollow on a dashed series
        s.dashed ? "fill=\"white\" stroke=\"" + color + "\" stroke-width=\"1.5\"" : "fill=\"" + color + "\"";
    for (std::size_t i = 0; i < std::min(s.x.size(), s.y.size()); ++i) {
      if (!drawn(s, i)) continue;
      const double x = px(s.x[i]) + dodge(k, s, i), y = py(s.y[i]);
      if (bar_end(s.y_low, i) || bar_end(s.y_high, i)) {
        const double lo = bar_end(s.y_low, i) ? py(s.y_low[i]) : y, hi = bar_end(s.y_high, i) ? py(s.y_high[i]) : y;
        o << "<path fill=\"none\" stroke=\"" << color << "\" stroke-width=\"1.2\" d=\"M" << x << ',' << lo << 'V' << hi;
        for (int end = 0; end < 2; ++end)
          if (bar_end(end ? s.y_high : s.y_low, i)) o << 'M' << x - 4 << ',' << (end ? hi : lo) << "h8";
        o << "\"/>\n";
      }
      if (s.markers) o << marker_element(shape, "marker", x, y, marker);
    }
    const double ly = top + 8 + 18 * static_cast<double>(k);
    o << "<line x1=\"" << left + pw + 12 << "\" x2=\"" << left + pw + 36 << "\" y1=\"" << ly << "\" y2=\"" << ly
      << "\" stroke=\"" << color << "\" stroke-width=\"2\"" << stroke << "/>\n";
    if (s.markers) o << marker_element(shape, "legend-marker", left + pw + 24, ly, marker);
    o << "<text x=\"" << left + pw + 42 << "\" y=\"" << ly + 4 << "\">" << xml_escape(s.name) << "</text>\n</g>\n";
  }
  o << "</svg>\n";
  return o.str();
}

void LineChart::write_svg(const std::string& path) const { tapegrad::io::write_file_atomic(path, svg()); }

// ---------------------------------------------------------------- small sums

double mean(const std::vector<double>& v) {
  double total = 0;
  for (double x : v) total += x;
  return v.empty() ? NAN : total / static_cast<double>(v.size());
}

double mean_of_last(const std::vector<double>& v, std::size_t n) {
  const std::size_t k = std::min(n, v.size());
  return mean(std::vector<double>(v.end() - static_cast<std::ptrdiff_t>(k), v.end()));
}

std::vector<double> smooth(const std::vector<double>& v, double beta) {
  std::vector<double> out;
  double m = 0, correction = 1;
  for (double x : v) {
    m = beta * m + (1 - beta) * x;
    correction *= beta;
    out.push_back(m / (1 - correction));
  }
  return out;
}

Series loss_curve(const std::string& name, const std::vector<double>& loss, double beta, bool dashed) {
  Series s{name, {}, smooth(loss, beta), dashed};
  for (std::size_t i = 1; i <= s.y.size(); ++i) s.x.push_back(static_cast<double>(i));
  return s;
}

}  // namespace study
